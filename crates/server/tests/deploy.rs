//! Self-hosting files, checked statically (scripts/image-test.sh builds and
//! runs the image for real; CI also validates the compose file with
//! `docker-compose config`), and the binary's `--healthcheck` mode.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path)
}

fn read(path: &str) -> String {
    std::fs::read_to_string(repo(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The Dockerfile's instructions, one per line (continuations joined,
/// comments and blank lines dropped, runs of spaces squeezed).
fn dockerfile_lines(text: &str) -> Vec<String> {
    text.replace("\\\n", " ")
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// The instructions of the runtime stage (from its `FROM` on).
fn runtime_stage(lines: &[String]) -> &[String] {
    let at = lines.iter().rposition(|l| l.starts_with("FROM ")).expect("a FROM");
    assert!(lines[at].ends_with(" AS runtime"), "the last stage is the runtime stage: {}", lines[at]);
    &lines[at..]
}

/// The variables the runtime stage's `ENV` sets.
fn runtime_env(runtime: &[String]) -> Vec<(String, String)> {
    let env = runtime.iter().find(|l| l.starts_with("ENV ")).expect("an ENV in the runtime stage");
    env.split_whitespace()
        .skip(1)
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or_else(|| panic!("ENV {pair} is not KEY=value"));
            (key.to_owned(), value.to_owned())
        })
        .collect()
}

#[test]
fn dockerfile_is_multi_stage_cached_small_and_unprivileged() {
    let text = read("docker/Dockerfile");
    let lines = dockerfile_lines(&text);
    let stages: Vec<&String> = lines.iter().filter(|l| l.starts_with("FROM ")).collect();
    assert!(stages.len() >= 3, "builder stages and a runtime stage: {stages:?}");
    assert!(text.contains("cargo chef prepare") && text.contains("cargo chef cook"), "dependency caching");
    // A slim Debian unless a build argument names another base.
    assert!(lines.iter().any(|l| l == "ARG RUNTIME_BASE=debian:bookworm-slim"), "a small runtime image");
    let runtime = runtime_stage(&lines);
    assert_eq!(runtime[0], "FROM ${RUNTIME_BASE} AS runtime");
    // The runtime stage runs as a named, non-root user and has a health check.
    let user = runtime.iter().find(|l| l.starts_with("USER ")).expect("a USER in the runtime stage");
    assert!(!user.contains("root") && !user.ends_with(" 0"), "{user}");
    assert!(runtime.iter().any(|l| l.starts_with("HEALTHCHECK ") && l.contains("--healthcheck")));
    assert!(runtime.iter().any(|l| l.starts_with("EXPOSE 8080")));
    assert!(text.contains("--locked"), "builds from the lock file");
    // BuildKit would fetch a `# syntax=` frontend from a registry.
    assert!(!text.lines().any(|l| l.starts_with("# syntax=")), "no frontend to download");
    // The binary comes from the builder unless a build argument names an
    // image holding a prebuilt one (scripts/image-test.sh).
    assert!(lines.iter().any(|l| l == "ARG SERVER_BINARY_FROM=builder"));
    assert!(lines.iter().any(|l| l == "FROM ${SERVER_BINARY_FROM} AS server-binary"));
    assert!(
        runtime.iter().any(|l| l
            == "COPY --from=server-binary /app/target/release/spades-server /usr/local/bin/spades-server")
    );
    // Everything the build needs is in the context.
    let ignore = read(".dockerignore");
    for kept in ["web", "migrations", "config", "crates"] {
        assert!(!ignore.lines().any(|l| l.trim() == kept), "{kept} must not be ignored");
    }
    assert!(ignore.lines().any(|l| l.trim() == "target"));
}

#[test]
fn the_image_owns_its_data_directory_and_ships_the_production_configuration() {
    let lines = dockerfile_lines(&read("docker/Dockerfile"));
    let runtime = runtime_stage(&lines);
    // The server's user and group are uid and gid 10001, and the data
    // directory exists, owned by them, before it is declared a volume: a
    // fresh named volume inherits that ownership.
    let setup = runtime.iter().position(|l| l.starts_with("RUN ") && l.contains("useradd")).expect("a user");
    for needle in [
        "groupadd --system --gid 10001 spades",
        "useradd --system --uid 10001 --gid spades",
        "install -d -o spades -g spades -m 0750 /var/lib/spades/data",
    ] {
        assert!(runtime[setup].contains(needle), "{} lacks {needle:?}", runtime[setup]);
    }
    assert_eq!(runtime.iter().find(|l| l.starts_with("USER ")).unwrap(), "USER spades:spades");
    let volume = runtime.iter().position(|l| l.starts_with("VOLUME ")).expect("a VOLUME");
    assert_eq!(runtime[volume], r#"VOLUME ["/var/lib/spades/data"]"#);
    assert!(setup < volume, "the directory is made before the volume is declared");
    let env = runtime_env(runtime);
    assert!(env.contains(&("SPADES_STORAGE__DATA_DIR".into(), "/var/lib/spades/data".into())), "{env:?}");
    // The production configuration, used by the server and its health check.
    assert!(runtime.iter().any(|l| l == "COPY config/production.toml /etc/spades/config.toml"));
    assert!(
        runtime.iter().any(|l| l == r#"ENTRYPOINT ["spades-server", "--config", "/etc/spades/config.toml"]"#)
    );
    let health = runtime.iter().find(|l| l.starts_with("HEALTHCHECK ")).unwrap();
    assert!(health.contains(r#""--config", "/etc/spades/config.toml", "--healthcheck""#), "{health}");
}

#[test]
// figment's `Jail` closures return figment's own (large) error type.
#[allow(clippy::result_large_err)]
fn the_image_runs_the_production_configuration_on_sqlite_in_its_volume() {
    // config/production.toml with the runtime stage's ENV, as the container
    // sees it.
    let lines = dockerfile_lines(&read("docker/Dockerfile"));
    let env = runtime_env(runtime_stage(&lines));
    figment::Jail::expect_with(|jail| {
        for (key, value) in &env {
            jail.set_env(key, value);
        }
        let config = spades_server::Config::load_from(
            Some(&repo("config/production.toml")),
            spades_server::Config::env(),
        )
        .map_err(|e| e.to_string())?;
        // SQLite in the volume, not the example's PostgreSQL host.
        assert_eq!(config.storage.database_url, "");
        assert_eq!(config.storage.data_dir, Path::new("/var/lib/spades/data"));
        assert_eq!(config.server.bind, "0.0.0.0:8080".parse().unwrap());
        // No placeholder site may embed the client.
        assert!(config.server.allowed_origins.is_empty());
        // Otherwise the production settings.
        assert_eq!(config.log.format, spades_server::config::LogFormat::Json);
        assert_eq!(config.server.shutdown_grace_secs, 20);
        assert_eq!(config.limits.max_tables, 5000);
        Ok(())
    });
}

/// The lines of one service of compose.yaml (checked as text: no YAML
/// parser here), up to the next service or top-level key.
fn service<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    let mut lines = text.lines().skip_while(|l| *l != format!("  {name}:"));
    assert!(lines.next().is_some(), "no service {name}");
    lines.take_while(|l| l.is_empty() || l.starts_with("   ") || l.starts_with("    ")).collect()
}

/// The value of a service's `key:` (its first occurrence).
fn service_key<'a>(lines: &[&'a str], key: &str) -> &'a str {
    let prefix = format!("{key}:");
    lines
        .iter()
        .find_map(|l| l.trim().strip_prefix(prefix.as_str()))
        .map(str::trim)
        .unwrap_or_else(|| panic!("no {key}"))
}

/// A compose duration such as `30s` or `1m30s`, in seconds.
fn seconds(duration: &str) -> u64 {
    let (mut total, mut number) = (0, 0);
    for c in duration.chars() {
        match c {
            '0'..='9' => number = number * 10 + u64::from(c.to_digit(10).unwrap()),
            's' => (total, number) = (total + number, 0),
            'm' => (total, number) = (total + number * 60, 0),
            'h' => (total, number) = (total + number * 3600, 0),
            _ => panic!("not a duration: {duration}"),
        }
    }
    assert_eq!(number, 0, "{duration} lacks a unit");
    total
}

#[test]
fn compose_file_runs_the_server_on_postgres_with_health_checks() {
    let text = read("docker/compose.yaml");
    for needle in [
        "services:",
        "  db:",
        "  server:",
        "image: postgres:",
        "pg_isready",
        "condition: service_healthy",
        "SPADES_STORAGE__DATABASE_URL: postgres://",
        "pgdata:/var/lib/postgresql/data",
        "dockerfile: docker/Dockerfile",
    ] {
        assert!(text.contains(needle), "compose.yaml lacks {needle:?}");
    }
    assert_eq!(text.matches("ports:").count(), 1, "one published port");
    assert!(text.trim_end().ends_with("pgdata:"), "a named volume");
}

#[test]
fn compose_file_requires_a_password_and_publishes_on_loopback() {
    let text = read("docker/compose.yaml");
    // The password is required wherever it is used: no silent default.
    assert_eq!(text.matches("${POSTGRES_PASSWORD").count(), 2, "the database and the server's URL");
    assert_eq!(text.matches("${POSTGRES_PASSWORD:?").count(), 2, "every use is required");
    // Loopback by default; the comments say how to expose the port.
    let server = service(&text, "server");
    let ports = server.iter().position(|l| l.trim() == "ports:").expect("ports");
    let published = server[ports + 1..].iter().find(|l| l.trim().starts_with("- ")).unwrap();
    assert_eq!(published.trim(), r#"- "${SPADES_PUBLISH_ADDRESS:-127.0.0.1}:${SPADES_PORT:-8080}:8080""#);
    assert!(text.contains("SPADES_PUBLISH_ADDRESS=0.0.0.0"), "how to expose the port is documented");
    // The example environment supplies the password, keeps loopback and
    // sets nothing compose.yaml does not use.
    let example = read("docker/.env.example");
    let settings: Vec<(&str, &str)> =
        example.lines().filter(|l| !l.starts_with('#')).filter_map(|l| l.split_once('=')).collect();
    let password = settings.iter().find(|(k, _)| *k == "POSTGRES_PASSWORD").expect("a POSTGRES_PASSWORD");
    assert!(password.1.len() >= 16, "a long example password");
    assert!(settings.contains(&("SPADES_PUBLISH_ADDRESS", "127.0.0.1")));
    for (key, _) in &settings {
        assert!(text.contains(&format!("${{{key}")), "{key} in .env.example is not used by compose.yaml");
    }
}

#[test]
fn compose_file_stops_gracefully_and_limits_logs_and_resources() {
    let text = read("docker/compose.yaml");
    let production = spades_server::Config::load_from(
        Some(&repo("config/production.toml")),
        figment::providers::Env::prefixed("SPADES_UNUSED_TEST_PREFIX_"),
    )
    .unwrap();
    for name in ["db", "server"] {
        let lines = service(&text, name);
        let grace = seconds(service_key(&lines, "stop_grace_period"));
        assert!(
            grace > production.server.shutdown_grace_secs,
            "{name}: stop_grace_period {grace}s is not longer than the server's shutdown grace"
        );
        assert_eq!(service_key(&lines, "logging"), "*logging", "{name}'s logs are rotated");
        for limit in ["cpus", "mem_limit", "pids_limit"] {
            assert!(!service_key(&lines, limit).is_empty(), "{name} has no {limit}");
        }
    }
    let logging = &text[text.find("x-logging: &logging").expect("the logging settings")..];
    let logging = &logging[..logging.find("\n\n").unwrap()];
    for needle in ["driver: json-file", r#"max-size: "10m""#, r#"max-file: "5""#] {
        assert!(logging.contains(needle), "logging lacks {needle:?}");
    }
    let server = service(&text, "server");
    assert_eq!(service_key(&server, "read_only"), "true");
    assert_eq!(service_key(&server, "cap_drop"), "[ALL]");
}

#[test]
fn the_production_example_loads() {
    let config = spades_server::Config::load_from(
        Some(&repo("config/production.toml")),
        figment::providers::Env::prefixed("SPADES_UNUSED_TEST_PREFIX_"),
    )
    .unwrap();
    assert!(config.storage.database_url.starts_with("postgres://"));
    assert_eq!(config.log.format, spades_server::config::LogFormat::Json);
    assert_ne!(config, spades_server::Config::default());
}

#[test]
fn healthcheck_mode_says_whether_the_server_answers() {
    let bin = env!("CARGO_BIN_EXE_spades-server");
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    // Nothing listens: unhealthy.
    let status =
        Command::new(bin).arg("--healthcheck").env("SPADES_SERVER__BIND", free.to_string()).status().unwrap();
    assert_eq!(status.code(), Some(1));
    // A running server: healthy.
    let data = std::env::temp_dir().join(format!("spades-health-{}", std::process::id()));
    let mut server = Command::new(bin)
        .env("SPADES_SERVER__BIND", free.to_string())
        .env("SPADES_STORAGE__DATA_DIR", &data)
        .env("RUST_LOG", "warn")
        .spawn()
        .unwrap();
    let mut healthy = false;
    for _ in 0..100 {
        let status = Command::new(bin)
            .arg("--healthcheck")
            .env("SPADES_SERVER__BIND", free.to_string())
            .status()
            .unwrap();
        if status.success() {
            healthy = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&data);
    assert!(healthy, "the health check never passed");
}

#[test]
fn bad_configuration_refuses_to_start_with_a_clear_message() {
    let out = Command::new(env!("CARGO_BIN_EXE_spades-server"))
        .env("SPADES_SERVER__BINDD", "0.0.0.0:1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bindd"), "{err}");
}
