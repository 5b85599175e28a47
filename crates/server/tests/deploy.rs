//! Self-hosting files, checked statically (no Docker engine runs here; CI
//! also validates the compose file with `docker-compose config`), and the
//! binary's `--healthcheck` mode.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path)
}

fn read(path: &str) -> String {
    std::fs::read_to_string(repo(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn dockerfile_is_multi_stage_cached_small_and_unprivileged() {
    let text = read("docker/Dockerfile");
    // One instruction per line: join backslash continuations.
    let joined = text.replace("\\\n", " ");
    let lines: Vec<&str> =
        joined.lines().map(str::trim).filter(|l| !l.starts_with('#') && !l.is_empty()).collect();
    let stages: Vec<&str> = lines.iter().filter(|l| l.starts_with("FROM ")).copied().collect();
    assert!(stages.len() >= 3, "builder stages and a runtime stage: {stages:?}");
    assert!(text.contains("cargo chef prepare") && text.contains("cargo chef cook"), "dependency caching");
    let runtime = stages.last().unwrap();
    assert!(runtime.contains("slim"), "a small runtime image: {runtime}");
    // The runtime stage runs as a named, non-root user and has a health check.
    let runtime_at = lines.iter().rposition(|l| l.starts_with("FROM ")).unwrap();
    let runtime_lines = &lines[runtime_at..];
    let user = runtime_lines.iter().find(|l| l.starts_with("USER ")).expect("a USER in the runtime stage");
    assert!(!user.contains("root") && !user.ends_with(" 0"), "{user}");
    assert!(runtime_lines.iter().any(|l| l.starts_with("HEALTHCHECK ") && l.contains("--healthcheck")));
    assert!(runtime_lines.iter().any(|l| l.starts_with("EXPOSE 8080")));
    assert!(text.contains("--locked"), "builds from the lock file");
    // Everything the build needs is in the context.
    let ignore = read(".dockerignore");
    for kept in ["web", "migrations", "config", "crates"] {
        assert!(!ignore.lines().any(|l| l.trim() == kept), "{kept} must not be ignored");
    }
    assert!(ignore.lines().any(|l| l.trim() == "target"));
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
