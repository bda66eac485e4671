//! The report's prose lives in `report.md` beside this file, as named blocks
//! with `{{placeholders}}`; the code only computes the figures and fills them
//! in. A block is `<!-- block: NAME -->` up to the next block marker.

use std::collections::HashMap;

/// The blocks of one template text.
pub struct Template {
    blocks: HashMap<&'static str, &'static str>,
}

/// The block marker's opening; the name follows, then ` -->`.
const MARKER: &str = "<!-- block: ";

impl Template {
    /// Splits `text` into its named blocks.
    pub fn parse(text: &'static str) -> Self {
        let mut blocks = HashMap::new();
        for chunk in text.split(MARKER).skip(1) {
            if let Some((name, body)) = chunk.split_once(" -->\n") {
                blocks.insert(name.trim(), body.trim_end_matches('\n'));
            }
        }
        Self { blocks }
    }

    /// Block `name` with every `{{key}}` replaced by its value.
    ///
    /// # Panics
    /// If the block is missing, or a placeholder is left unfilled or a value
    /// is given for none: both are mistakes in this crate, caught by its tests.
    pub fn fill<V: AsRef<str>>(&self, name: &str, values: &[(&str, V)]) -> String {
        let Some(body) = self.blocks.get(name) else {
            panic!("report.md has no block {name:?}");
        };
        let mut out = body.to_string();
        for (key, value) in values {
            let placeholder = format!("{{{{{key}}}}}");
            assert!(
                out.contains(&placeholder),
                "block {name:?} has no {placeholder}"
            );
            out = out.replace(&placeholder, value.as_ref());
        }
        assert!(
            !out.contains("{{"),
            "block {name:?} left a placeholder: {out}"
        );
        out
    }

    /// Block `name`, which has no placeholders.
    pub fn text(&self, name: &str) -> String {
        self.fill::<&str>(name, &[])
    }
}

#[cfg(test)]
mod tests {
    use super::Template;

    const TEXT: &str = "<!-- block: a -->\nHello {{who}}.\n\n<!-- block: b -->\nplain\n";

    #[test]
    fn blocks_fill_their_placeholders() {
        let t = Template::parse(TEXT);
        assert_eq!(t.fill("a", &[("who", "world")]), "Hello world.");
        assert_eq!(t.text("b"), "plain");
    }

    #[test]
    #[should_panic(expected = "left a placeholder")]
    fn an_unfilled_placeholder_is_a_mistake() {
        Template::parse(TEXT).text("a");
    }

    #[test]
    fn every_block_of_the_report_parses() {
        let t = Template::parse(include_str!("report.md"));
        assert!(t.blocks.len() >= 10, "{:?}", t.blocks.keys());
    }
}
