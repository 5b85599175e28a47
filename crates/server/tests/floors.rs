//! The server crate's floors: every `use crate::…` in `src/` goes to a
//! module on a lower floor, or is one of the uses within a floor that
//! `README.md` draws. The floors are read from the README's block, so the
//! drawing there and the code cannot part.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The floors, lowest first, and the uses allowed within a floor.
struct Floors {
    /// Module -> (floor index, floor name).
    floor: BTreeMap<String, (usize, String)>,
    /// (user, used) pairs allowed on one floor.
    seams: BTreeSet<(String, String)>,
}

/// Reads the block between `<!-- floors -->` and `<!-- /floors -->`: one
/// line a floor, highest first, `name  module module→used,used …`.
fn floors(readme: &str) -> Floors {
    let start = readme.find("<!-- floors -->").expect("README.md has a floors block");
    let end = readme.find("<!-- /floors -->").expect("the floors block ends");
    let lines: Vec<&str> = readme[start..end]
        .lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty() && !l.starts_with("```"))
        .collect();
    let mut out = Floors { floor: BTreeMap::new(), seams: BTreeSet::new() };
    for (i, line) in lines.iter().rev().enumerate() {
        let mut words = line.split_whitespace();
        let name = words.next().expect("a floor has a name").to_owned();
        for word in words {
            let (module, used) = word.split_once('→').unwrap_or((word, ""));
            assert!(
                out.floor.insert(module.to_owned(), (i, name.clone())).is_none(),
                "{module} is on two floors"
            );
            for u in used.split(',').filter(|u| !u.is_empty()) {
                out.seams.insert((module.to_owned(), u.to_owned()));
            }
        }
    }
    out
}

/// Every `.rs` file under `dir`, but test files (`tests.rs`, `tests/`).
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "tests" && name != "bin" {
                sources(&path, out);
            }
        } else if name.ends_with(".rs") && name != "tests.rs" {
            out.push(path);
        }
    }
}

/// The code of a file without its comments and `#[cfg(test)]` items.
fn code(text: &str) -> String {
    let mut out = String::new();
    let mut skip_depth: Option<i32> = None;
    let mut pending_test = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let line = match trimmed.find("//") {
            // A comment, unless inside a string (a URL): good enough here,
            // where code lines do not hold "//" outside strings.
            Some(at) if !trimmed[..at].contains('"') => &trimmed[..at],
            _ => trimmed,
        };
        if let Some(depth) = skip_depth.as_mut() {
            *depth += line.matches('{').count() as i32 - line.matches('}').count() as i32;
            if *depth <= 0 {
                skip_depth = None;
            }
            continue;
        }
        if line.starts_with("#[cfg(test)]") {
            pending_test = true;
            continue;
        }
        if pending_test {
            pending_test = false;
            if line.ends_with(';') {
                continue;
            }
            let depth = line.matches('{').count() as i32 - line.matches('}').count() as i32;
            if depth > 0 {
                skip_depth = Some(depth);
            }
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The top-level modules a file's code names with `crate::`.
fn uses(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // `use crate::{a, b::c};`
            let inner = &group[..group.find('}').unwrap_or(group.len())];
            for item in inner.split(',') {
                let name: String =
                    item.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !name.is_empty() {
                    out.insert(name);
                }
            }
            continue;
        }
        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if !name.is_empty() && name.chars().next().is_some_and(char::is_lowercase) {
            out.insert(name);
        }
    }
    out
}

/// The top-level module a file belongs to.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
    first.trim_end_matches(".rs").to_owned()
}

#[test]
fn every_module_uses_only_the_floors_below_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let floors = floors(&std::fs::read_to_string(root.join("README.md")).unwrap());
    let src = root.join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let mut wrong = Vec::new();
    let mut seen = BTreeSet::new();
    for file in &files {
        let module = module_of(&src, file);
        if module == "lib" || module == "main" {
            continue;
        }
        seen.insert(module.clone());
        let Some((level, name)) = floors.floor.get(&module) else {
            wrong.push(format!("{module} is on no floor of README.md"));
            continue;
        };
        for used in uses(&code(&std::fs::read_to_string(file).unwrap())) {
            if used == module {
                continue;
            }
            let Some((used_level, used_name)) = floors.floor.get(&used) else {
                wrong.push(format!("{} uses {used}, which is on no floor", file.display()));
                continue;
            };
            let sideways = used_level == level && floors.seams.contains(&(module.clone(), used.clone()));
            if used_level > level || (used_level == level && !sideways) {
                wrong.push(format!(
                    "{} ({name}) uses {used} ({used_name}): that is not below it",
                    file.strip_prefix(root).unwrap().display()
                ));
            }
        }
    }
    for module in floors.floor.keys() {
        if !seen.contains(module) {
            wrong.push(format!("README.md names {module}, which is not a module of src/"));
        }
    }
    assert!(wrong.is_empty(), "the floors do not hold:\n{}", wrong.join("\n"));
}

#[test]
fn the_check_sees_what_it_must() {
    let text = "use crate::{hosting::Hosting, storage};\n\
                // crate::app in a comment\n\
                let x = crate::time::now_ms();\n\
                #[cfg(test)]\n\
                mod tests {\n    use crate::app;\n}\n";
    let found = uses(&code(text));
    assert_eq!(found, ["hosting", "storage", "time"].into_iter().map(String::from).collect());
    let f = floors("<!-- floors -->\n```text\ntop  a→b  b\nbottom  c\n```\n<!-- /floors -->");
    assert_eq!(f.floor["a"].0, 1);
    assert_eq!(f.floor["c"].0, 0);
    assert!(f.seams.contains(&("a".to_owned(), "b".to_owned())));
}

/// The sibling files a file's code names with `super::` (inside a
/// directory module, `super` is the directory's `mod.rs`, and
/// `super::x` names the sibling file `x.rs`).
fn sibling_uses(code: &str, siblings: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (at, _) in code.match_indices("super::") {
        let rest = &code[at + "super::".len()..];
        let names: Vec<String> = match rest.strip_prefix('{') {
            Some(group) => group[..group.find('}').unwrap_or(group.len())]
                .split(',')
                .map(|item| item.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect())
                .collect(),
            None => vec![rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()],
        };
        out.extend(names.into_iter().filter(|n| siblings.contains(n)));
    }
    out
}

/// A loop in `edges` (file -> files it uses), as the files in order.
fn a_loop(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        at: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == at) {
            return Some(path[i..].to_vec());
        }
        if !done.insert(at.to_owned()) {
            return None;
        }
        path.push(at.to_owned());
        for next in edges.get(at).into_iter().flatten() {
            if let Some(found) = visit(next, edges, path, done) {
                return Some(found);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    edges.keys().find_map(|start| visit(start, edges, &mut Vec::new(), &mut done))
}

#[test]
fn the_files_of_a_directory_module_use_each_other_in_no_loop() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut loops = Vec::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.join("mod.rs").exists() {
            continue;
        }
        let siblings: BTreeSet<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| {
                let name = e.unwrap().file_name().to_string_lossy().into_owned();
                name.strip_suffix(".rs").filter(|n| *n != "mod" && *n != "tests").map(str::to_owned)
            })
            .collect();
        let edges: BTreeMap<String, BTreeSet<String>> = siblings
            .iter()
            .map(|s| {
                let text = std::fs::read_to_string(dir.join(format!("{s}.rs"))).unwrap();
                (s.clone(), sibling_uses(&code(&text), &siblings))
            })
            .collect();
        if let Some(found) = a_loop(&edges) {
            loops.push(format!("{}: {}", dir.file_name().unwrap().to_string_lossy(), found.join(" -> ")));
        }
    }
    assert!(loops.is_empty(), "files that use each other in a loop:\n{}", loops.join("\n"));
}

#[test]
fn the_loop_check_sees_a_loop() {
    let siblings: BTreeSet<String> = ["seats", "arrange", "clock"].into_iter().map(String::from).collect();
    let seats = sibling_uses("use super::{Table, arrange::Place};\n", &siblings);
    let arrange = sibling_uses("use super::seats::Occupant;\nlet t = super::clock::now();\n", &siblings);
    assert_eq!(seats, ["arrange".to_owned()].into());
    assert_eq!(arrange, ["clock".to_owned(), "seats".to_owned()].into());
    let mut edges = BTreeMap::from([("seats".to_owned(), seats), ("arrange".to_owned(), arrange)]);
    assert!(a_loop(&edges).is_some());
    edges.get_mut("seats").unwrap().clear();
    assert!(a_loop(&edges).is_none());
}
