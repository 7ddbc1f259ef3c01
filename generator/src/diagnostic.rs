//! Diagnostics about a workflow manifest: each names the JSON pointer it is
//! about, says what was expected and what was found, and (given the source
//! text) the line and column; rendered like a compiler's, or as JSON.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde::Serialize;

/// One problem in a manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// RFC 6901 pointer to the value, e.g. `/segments/1/sequence/0/config/hasher`.
    pub pointer: String,
    /// What is wrong, in one sentence.
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub found: Option<String>,
    /// How to fix it, when there is more to say.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// 1-based line and column of the value, when the source text is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
}

impl Diagnostic {
    pub fn new(pointer: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            pointer: pointer.into(),
            message: message.into(),
            expected: None,
            found: None,
            hint: None,
            line: None,
            column: None,
        }
    }

    pub fn expected(mut self, expected: impl Into<String>) -> Self {
        self.expected = Some(expected.into());
        self
    }

    pub fn found(mut self, found: impl Into<String>) -> Self {
        self.found = Some(found.into());
        self
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Renders like a compiler: `file:line:col: error: ...`, the pointer,
    /// the source line with a caret, expected/found and the hint.
    pub fn render(&self, file: &str, source: Option<&str>) -> String {
        let mut out = String::new();
        match (self.line, self.column) {
            (Some(l), Some(c)) => {
                let _ = writeln!(out, "{file}:{l}:{c}: error: {}", self.message);
            }
            _ => {
                let _ = writeln!(out, "{file}: error: {}", self.message);
            }
        }
        let pointer = if self.pointer.is_empty() { "(the whole document)" } else { &self.pointer };
        let _ = writeln!(out, "  --> {pointer}");
        if let (Some(src), Some(l), Some(c)) = (source, self.line, self.column) {
            if let Some(text) = src.lines().nth(l - 1) {
                let shown: String = text.chars().take(160).collect();
                let gutter = l.to_string().len();
                let _ = writeln!(out, "{:gutter$} |", "");
                // One column per character: control characters (which could
                // also mangle a terminal) are shown as U+FFFD.
                let shown: String = shown.chars().map(|ch| if ch.is_control() { '\u{fffd}' } else { ch }).collect();
                let _ = writeln!(out, "{l} | {shown}");
                let col = c.saturating_sub(1).min(shown.chars().count());
                let _ = writeln!(out, "{:gutter$} | {:col$}^", "", "");
            }
        }
        if let Some(e) = &self.expected {
            let _ = writeln!(out, "  = expected: {e}");
        }
        if let Some(f) = &self.found {
            let _ = writeln!(out, "  = found: {f}");
        }
        if let Some(h) = &self.hint {
            let _ = writeln!(out, "  = hint: {h}");
        }
        out
    }
}

/// Escapes one RFC 6901 reference token.
pub fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Shortens user text for a message and makes control characters visible.
pub fn quote(text: &str) -> String {
    let mut s: String = text.chars().take(60).collect();
    if text.chars().count() > 60 {
        s.push_str("...");
    }
    format!("\"{}\"", s.escape_debug())
}

/// Where each value of a JSON document starts: JSON pointer -> (line, column).
/// Built by a small scanner over text that serde_json has already accepted.
#[derive(Debug, Default)]
pub struct Locations {
    positions: HashMap<String, (usize, usize)>,
}

impl Locations {
    pub fn scan(text: &str) -> Self {
        let mut scanner = Scanner { bytes: text.as_bytes(), pos: 0, positions: HashMap::new() };
        scanner.skip_ws();
        scanner.value(String::new(), 0);
        let line_starts: Vec<usize> = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
        let positions = scanner
            .positions
            .into_iter()
            .map(|(ptr, offset)| {
                let line = line_starts.partition_point(|&s| s <= offset);
                let start = line_starts[line - 1];
                let column = text[start..offset].chars().count() + 1;
                (ptr, (line, column))
            })
            .collect();
        Self { positions }
    }

    /// The position of `pointer`, or of its nearest ancestor that exists.
    pub fn find(&self, pointer: &str) -> Option<(usize, usize)> {
        let mut p = pointer;
        loop {
            if let Some(pos) = self.positions.get(p) {
                return Some(*pos);
            }
            let cut = p.rfind('/')?;
            p = &p[..cut];
        }
    }

    /// Fills in line and column of each diagnostic.
    pub fn annotate(&self, diagnostics: &mut [Diagnostic]) {
        for d in diagnostics {
            if let Some((l, c)) = self.find(&d.pointer) {
                d.line = Some(l);
                d.column = Some(c);
            }
        }
    }
}

struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
    positions: HashMap<String, usize>,
}

impl Scanner<'_> {
    fn skip_ws(&mut self) {
        while self.pos < self.bytes.len() && matches!(self.bytes[self.pos], b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// Records the value at `pointer` and skips it. Depth is bounded by
    /// serde_json's own limit, which the text already passed.
    fn value(&mut self, pointer: String, depth: usize) {
        if depth > 256 {
            return;
        }
        self.positions.insert(pointer.clone(), self.pos);
        match self.peek() {
            Some(b'{') => {
                self.pos += 1;
                loop {
                    self.skip_ws();
                    match self.peek() {
                        Some(b'}') => {
                            self.pos += 1;
                            return;
                        }
                        Some(b',') => self.pos += 1,
                        Some(b'"') => {
                            let key = self.string();
                            self.skip_ws();
                            if self.peek() == Some(b':') {
                                self.pos += 1;
                            }
                            self.skip_ws();
                            self.value(format!("{pointer}/{}", escape_token(&key)), depth + 1);
                        }
                        _ => return,
                    }
                }
            }
            Some(b'[') => {
                self.pos += 1;
                let mut index = 0;
                loop {
                    self.skip_ws();
                    match self.peek() {
                        Some(b']') => {
                            self.pos += 1;
                            return;
                        }
                        Some(b',') => self.pos += 1,
                        Some(_) => {
                            self.value(format!("{pointer}/{index}"), depth + 1);
                            index += 1;
                        }
                        None => return,
                    }
                }
            }
            Some(b'"') => {
                self.string();
            }
            Some(_) => {
                while self.pos < self.bytes.len()
                    && !matches!(self.bytes[self.pos], b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t')
                {
                    self.pos += 1;
                }
            }
            None => {}
        }
    }

    /// Reads a string literal starting at `"`, returning its decoded value.
    fn string(&mut self) -> String {
        let start = self.pos;
        self.pos += 1;
        while self.pos < self.bytes.len() {
            match self.bytes[self.pos] {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    break;
                }
                _ => self.pos += 1,
            }
        }
        let raw = &self.bytes[start..self.pos.min(self.bytes.len())];
        serde_json::from_slice::<String>(raw).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locates_pointers() {
        let text = "{\n  \"a\": [1, {\"b/c\": \"x\"}],\n  \"é\": true\n}";
        let loc = Locations::scan(text);
        assert_eq!(loc.find(""), Some((1, 1)));
        assert_eq!(loc.find("/a"), Some((2, 8)));
        assert_eq!(loc.find("/a/1"), Some((2, 12)));
        assert_eq!(loc.find("/a/1/b~1c"), Some((2, 20)));
        assert_eq!(loc.find("/é"), Some((3, 8)));
        // A missing child falls back to its parent.
        assert_eq!(loc.find("/a/1/zzz"), Some((2, 12)));
    }

    #[test]
    fn renders_like_a_compiler() {
        let mut d =
            Diagnostic::new("/segments/0/inputs/0", "segment 0 refers to segment 3, which does not come before it")
                .expected("-1 (an external input) or an earlier segment")
                .found("3")
                .hint("segments may only use outputs of earlier segments");
        d.line = Some(2);
        d.column = Some(14);
        let text = d.render("wf.json", Some("{\n  \"inputs\": [3]\n}"));
        assert!(text.starts_with("wf.json:2:14: error: segment 0 refers to segment 3"), "{text}");
        assert!(text.contains("  --> /segments/0/inputs/0\n"));
        assert!(text.contains("2 |   \"inputs\": [3]\n  |              ^\n"), "{text}");
        assert!(text.contains("= expected: -1"));
        assert!(text.contains("= hint: segments"));
    }

    #[test]
    fn quotes_control_characters() {
        assert_eq!(quote("a\"b\n\0"), r#""a\"b\n\0""#);
        assert!(quote(&"x".repeat(100)).ends_with("...\""));
    }
}
