//! The engine's layers (issue 58): every `crate::` path in `engine/src` (a `use` or a path in
//! code; not comments, not `#[cfg(test)] mod tests`) goes from a top-level module to one in
//! its own layer or below, and the modules of one layer import each other without a cycle. The
//! layers are read from the picture in `engine/src/lib.rs` (its `N name: modules` lines), so
//! the picture a newcomer reads is the one checked; a top-level module the picture does not
//! place fails too. A path through a name the crate root re-exports
//! (`crate::RunConfig`) counts as an import of the module it comes from.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Layer number and name per top-level module, from the picture in `lib.rs` (its lines
/// `//! N name: module module ...`).
fn layers(lib: &str) -> BTreeMap<String, (u32, String)> {
    let mut out = BTreeMap::new();
    for line in lib.lines() {
        let Some(line) = line.strip_prefix("//! ") else {
            continue;
        };
        let mut words = line.split_whitespace();
        let (Some(number), Some(name)) = (words.next(), words.next()) else {
            continue;
        };
        let (Ok(number), Some(name)) = (number.parse::<u32>(), name.strip_suffix(':')) else {
            continue;
        };
        for module in words {
            let clash = out.insert(module.to_string(), (number, name.to_string()));
            assert!(clash.is_none(), "lib.rs places {module} in two layers");
        }
    }
    out
}

/// Names the crate root re-exports, with the top-level module each comes from (`pub use
/// config::{InboxOrder, RunConfig};` in `lib.rs`).
fn root_names(lib: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for line in lib.lines() {
        let Some(rest) = line.trim().strip_prefix("pub use ") else {
            continue;
        };
        let rest = rest.trim_end_matches(';');
        let Some((module, names)) = rest.split_once("::") else {
            continue;
        };
        let names = names.trim_start_matches('{').trim_end_matches('}');
        for name in names.split(',') {
            let name = name.trim().rsplit("::").next().unwrap_or("").trim();
            if !name.is_empty() {
                out.insert(name.to_string(), module.to_string());
            }
        }
    }
    out
}

/// `source` without comments and without its `#[cfg(test)] mod tests { ... }` blocks (tests
/// may build their fixtures from any layer).
fn code_of(source: &str) -> String {
    let lines: Vec<&str> = source.lines().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim_start();
        if line.starts_with("#[cfg(test)]")
            && lines
                .get(i + 1)
                .is_some_and(|l| l.trim_start().starts_with("mod tests"))
        {
            // Skip to the line closing the module: braces counted outside strings and chars.
            let mut depth = 0i64;
            let mut opened = false;
            i += 1;
            while i < lines.len() {
                depth += brace_balance(lines[i]);
                opened |= lines[i].contains('{');
                i += 1;
                if opened && depth == 0 {
                    break;
                }
            }
            continue;
        }
        if !line.starts_with("//") {
            out.push_str(lines[i]);
            out.push('\n');
        }
        i += 1;
    }
    out
}

/// Opening less closing braces on `line`, outside string and char literals and comments.
fn brace_balance(line: &str) -> i64 {
    let (mut depth, mut in_string, mut escaped) = (0, false, false);
    let chars: Vec<char> = line.chars().collect();
    let mut k = 0;
    while k < chars.len() {
        let c = chars[k];
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
        } else if c == '\'' && chars.get(k + 2) == Some(&'\'') {
            k += 2;
        } else if c == '/' && chars.get(k + 1) == Some(&'/') {
            break;
        } else if c == '{' {
            depth += 1;
        } else if c == '}' {
            depth -= 1;
        }
        k += 1;
    }
    depth
}

/// The first identifier of each `crate::` path in `code` (`crate::{a::X, b}` gives `a` and
/// `b`).
fn crate_paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `my_crate::`
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let ident: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !ident.is_empty() {
                    out.push(ident);
                }
            }
        } else {
            let ident: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.push(ident);
        }
    }
    out
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// What is wrong with the imports of the crate in `src`, one line each (none: the layers hold).
fn problems(src: &Path) -> Vec<String> {
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let (layer_of, root) = (layers(&lib), root_names(&lib));
    let mut problems = Vec::new();
    // Edges between top-level modules, each with the first file and path that makes it.
    let mut edges: BTreeMap<(String, String), String> = BTreeMap::new();
    for file in rust_files(src) {
        let rel = file.strip_prefix(src).unwrap();
        let top = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let top = top.trim_end_matches(".rs").to_string();
        if top == "lib" {
            continue;
        }
        let Some((from_layer, from_name)) = layer_of.get(&top) else {
            problems.push(format!(
                "{}: module `{top}` is in no layer of lib.rs's picture",
                rel.display()
            ));
            continue;
        };
        let code = code_of(&std::fs::read_to_string(&file).unwrap());
        for ident in crate_paths(&code) {
            let target = match root.get(&ident) {
                Some(module) => module.clone(),
                None => ident.clone(),
            };
            if target == top {
                continue;
            }
            let Some((to_layer, to_name)) = layer_of.get(&target) else {
                continue; // an item of lib.rs itself
            };
            if to_layer > from_layer {
                problems.push(format!(
                    "{}: `crate::{ident}` imports `{target}` (layer {to_layer} {to_name}) from `{top}` (layer {from_layer} {from_name}), a layer below it",
                    rel.display()
                ));
            }
            edges
                .entry((top.clone(), target))
                .or_insert_with(|| format!("{} (`crate::{ident}`)", rel.display()));
        }
    }
    for cycle in cycles(&edges) {
        let through: Vec<String> = cycle
            .windows(2)
            .map(|w| {
                format!(
                    "{} -> {} in {}",
                    w[0],
                    w[1],
                    edges[&(w[0].clone(), w[1].clone())]
                )
            })
            .collect();
        problems.push(format!("import cycle: {}", through.join("; ")));
    }
    problems
}

/// For each module on a cycle not yet shown, a shortest cycle through it (first module
/// repeated at the end).
fn cycles(edges: &BTreeMap<(String, String), String>) -> Vec<Vec<String>> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        next.entry(a).or_default().push(b);
    }
    let (mut out, mut shown) = (Vec::new(), BTreeSet::<String>::new());
    for &m in next.keys() {
        if shown.contains(m) {
            continue;
        }
        // Breadth first from m until an edge leads back to it.
        let mut parent: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([m]);
        let mut closing = None;
        while let (None, Some(a)) = (closing, queue.pop_front()) {
            for &b in next.get(a).into_iter().flatten() {
                if b == m {
                    closing = Some(a);
                    break;
                }
                if !parent.contains_key(b) {
                    parent.insert(b, a);
                    queue.push_back(b);
                }
            }
        }
        let Some(mut at) = closing else {
            continue;
        };
        let mut back = Vec::new();
        while at != m {
            back.push(at);
            at = parent[at];
        }
        back.reverse();
        let cycle: Vec<String> = std::iter::once(m)
            .chain(back)
            .chain(std::iter::once(m))
            .map(str::to_string)
            .collect();
        shown.extend(cycle.iter().cloned());
        out.push(cycle);
    }
    out
}

#[test]
fn the_engine_imports_only_downward_without_cycles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let problems = problems(&src);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The check fails where it must: on a hand-made crate with a module in no layer, an import
/// going up a layer (in a `use` and through a root re-export), and a cycle within a layer;
/// not on imports in comments or in a tests module.
#[test]
fn the_check_names_each_broken_import() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    let write = |name: &str, text: &str| {
        let path = src.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "lib.rs",
        "//! ```text\n//! 1 top: c d\n//!   the top\n//! 0 base: a b\n//! ```\n\
         pub use d::Thing;\n",
    );
    write("a.rs", "use crate::b::X;\n// crate::c in a comment\n");
    write(
        "b/mod.rs",
        "use crate::{a, b::Y};\nfn f() { crate::Thing::new(); }\n",
    );
    write(
        "c.rs",
        "use crate::a::X;\n#[cfg(test)]\nmod tests {\n    use crate::d::Z; // \"}\" \n    fn g() {}\n}\nuse crate::b::W;\n",
    );
    write("d.rs", "pub struct Thing;\n");
    write("e.rs", "use crate::a::X;\n");
    let problems = problems(src);
    assert_eq!(
        problems,
        [
            "b/mod.rs: `crate::Thing` imports `d` (layer 1 top) from `b` (layer 0 base), a layer below it",
            "e.rs: module `e` is in no layer of lib.rs's picture",
            "import cycle: a -> b in a.rs (`crate::b`); b -> a in b/mod.rs (`crate::a`)",
        ],
        "{problems:#?}"
    );
}
