//! The documentation's two size rules (issue 30), checked so they cannot rot:
//! README.md holds at most [`README_MAX_LINES`] lines, and no sentence of
//! README.md or `docs/*.md` is longer than [`MAX_SENTENCE_WORDS`] words.
//! Prose is split into sentences at `. `, `? ` and `! `; code blocks, tables
//! and headings are not prose, and a paragraph or list item ends a sentence.
//! Beside them: every `docs/` page is included in the examples crate, whose
//! doc tests compile its Rust blocks, and every ```json block parses.

use crate::step::workspace_root;

/// The README is a front door, not the reference.
pub const README_MAX_LINES: usize = 150;
/// The longest sentence a reader is asked to hold.
pub const MAX_SENTENCE_WORDS: usize = 40;

/// Checks README.md and every `docs/*.md` of the workspace.
pub fn check() -> Result<(), String> {
    let root = workspace_root();
    let mut files = vec![root.join("README.md")];
    let docs = root.join("docs");
    let entries = std::fs::read_dir(&docs).map_err(|e| format!("{}: {e}", docs.display()))?;
    for entry in entries {
        let path = entry
            .map_err(|e| format!("{}: {e}", docs.display()))?
            .path();
        if path.extension().is_some_and(|ext| ext == "md") {
            files.push(path);
        }
    }
    files.sort();
    // Every page's Rust blocks are doc tests of the examples crate.
    let lib = root.join("examples/src/lib.rs");
    let compiled_pages =
        std::fs::read_to_string(&lib).map_err(|e| format!("{}: {e}", lib.display()))?;
    let mut problems = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let name = path.strip_prefix(&root).unwrap_or(path).display();
        let lines = text.lines().count();
        if path.parent() == Some(root.as_path()) && lines > README_MAX_LINES {
            problems.push(format!(
                "{name}: {lines} lines (at most {README_MAX_LINES})"
            ));
        }
        let file = path
            .file_name()
            .map(|f| f.to_string_lossy())
            .unwrap_or_default();
        if path.parent() == Some(docs.as_path())
            && !compiled_pages.contains(&format!("docs/{file}\")"))
        {
            problems.push(format!(
                "{name}: not included in examples/src/lib.rs, so its code is not compiled"
            ));
        }
        for (line, json) in json_blocks(&text) {
            if let Err(e) = serde_json::from_str::<serde_json::Value>(&json) {
                problems.push(format!("{name}:{line}: the json block does not parse: {e}"));
            }
        }
        for (line, sentence) in long_sentences(&text) {
            let words = sentence.split_whitespace().count();
            problems.push(format!(
                "{name}:{line}: a sentence of {words} words (at most {MAX_SENTENCE_WORDS}): {sentence}"
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// The sentences of `markdown`'s prose longer than [`MAX_SENTENCE_WORDS`]
/// words, each with the line it starts on.
pub fn long_sentences(markdown: &str) -> Vec<(usize, String)> {
    let mut long = Vec::new();
    for (line, block) in prose_blocks(markdown) {
        for sentence in split_sentences(&block) {
            if sentence.split_whitespace().count() > MAX_SENTENCE_WORDS {
                long.push((line, sentence));
            }
        }
    }
    long
}

/// The ```json blocks of `markdown`, each with the line its fence is on.
fn json_blocks(markdown: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (index, line) in markdown.lines().enumerate() {
        match &mut current {
            Some(_) if line.trim_start().starts_with("```") => blocks.extend(current.take()),
            Some((_, text)) => {
                text.push_str(line);
                text.push('\n');
            }
            None if line.trim_start().starts_with("```json") => {
                current = Some((index + 1, String::new()));
            }
            None => {}
        }
    }
    blocks
}

/// Paragraphs and list items, each joined onto one line, with the line it
/// starts on; code blocks, tables, headings and HTML are left out.
fn prose_blocks(markdown: &str) -> Vec<(usize, String)> {
    let mut blocks: Vec<(usize, String)> = Vec::new();
    let mut current: Option<(usize, String)> = None;
    let mut in_code = false;
    for (index, raw) in markdown.lines().enumerate() {
        let line = raw.trim();
        let fence = line.starts_with("```") || line.starts_with("~~~");
        let not_prose = line.is_empty()
            || fence
            || in_code
            || line.starts_with('|')
            || line.starts_with('#')
            || line.starts_with('<');
        if fence {
            in_code = !in_code;
        }
        let item = line.starts_with("- ") || line.starts_with("* ") || starts_numbered(line);
        if not_prose || item {
            blocks.extend(current.take());
        }
        if !not_prose {
            let line = if item { strip_marker(line) } else { line };
            match &mut current {
                Some((_, text)) => {
                    text.push(' ');
                    text.push_str(line);
                }
                None => current = Some((index + 1, line.to_string())),
            }
        }
    }
    blocks.extend(current);
    blocks
}

fn strip_marker(item: &str) -> &str {
    item.split_once(' ')
        .map_or(item, |(_, rest)| rest.trim_start())
}

fn starts_numbered(line: &str) -> bool {
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && line[digits..].starts_with(". ")
}

/// Splits at `. `, `? ` and `! ` (and the block's end).
fn split_sentences(block: &str) -> Vec<String> {
    let mut sentences = Vec::new();
    let mut start = 0;
    let bytes = block.as_bytes();
    for i in 0..bytes.len() {
        let ends = matches!(bytes[i], b'.' | b'?' | b'!') && bytes.get(i + 1) == Some(&b' ');
        if ends {
            sentences.push(block[start..=i].trim().to_string());
            start = i + 1;
        }
    }
    sentences.push(block[start..].trim().to_string());
    sentences.retain(|s| !s.is_empty());
    sentences
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(n: usize) -> String {
        vec!["word"; n].join(" ")
    }

    #[test]
    fn sentences_split_at_stops_and_blocks() {
        let text = format!(
            "{}. {}?\n{} and\nmore!\n\n- {}\n- {}",
            words(3),
            words(2),
            words(1),
            words(4),
            words(5)
        );
        let blocks = prose_blocks(&text);
        let sentences: Vec<usize> = blocks
            .iter()
            .flat_map(|(_, b)| split_sentences(b))
            .map(|s| s.split_whitespace().count())
            .collect();
        assert_eq!(sentences, vec![3, 2, 3, 4, 5]);
    }

    #[test]
    fn code_tables_and_headings_are_not_prose() {
        let long = words(MAX_SENTENCE_WORDS + 1);
        let text = format!(
            "```sh\n{long}\n```\n| {long} |\n# {long}\n\n{}",
            words(MAX_SENTENCE_WORDS)
        );
        assert!(long_sentences(&text).is_empty());
        let text = format!("intro\n\n{long}");
        assert_eq!(long_sentences(&text), vec![(3, long)]);
    }

    #[test]
    fn json_blocks_are_found() {
        let text = "```sh\n{\n```\n```json\n[1,\n 2]\n```\n";
        assert_eq!(json_blocks(text), vec![(4, "[1,\n 2]\n".to_string())]);
    }

    #[test]
    fn the_workspace_docs_follow_the_rules() {
        assert!(workspace_root().join("docs").is_dir(), "docs/ is missing");
        if let Err(problems) = check() {
            panic!("{problems}");
        }
    }
}
