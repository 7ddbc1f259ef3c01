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
    /// The problem is the key of the value `pointer` names (an unknown
    /// field), so line and column are the key's.
    #[serde(skip)]
    pub at_key: bool,
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
            at_key: false,
        }
    }

    /// Located at the key of the value `pointer` names, not at the value.
    pub fn at_key(mut self) -> Self {
        self.at_key = true;
        self
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
            if let Some(text) = l.checked_sub(1).and_then(|i| src.lines().nth(i)) {
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

/// Line and column (1-based) of the values that diagnostics point at.
///
/// Built by one pass of a small scanner over the text, which may be any
/// bytes (the text of a manifest that is too large, or not JSON, is scanned
/// too): it never indexes past the end, never recurses deeper than the
/// pointers it was asked about, and skips everything else iteratively, so it
/// is linear in the text and its memory in the number of pointers.
#[derive(Debug, Default)]
pub struct Locations {
    root: Node,
}

/// A trie of the reference tokens of the pointers asked about; each node
/// gets the position of its value if the scanner meets it.
#[derive(Debug, Default)]
struct Node {
    position: Option<(usize, usize)>,
    /// Where its key starts, for a member of an object.
    key_position: Option<(usize, usize)>,
    children: HashMap<String, Node>,
}

impl Locations {
    /// Finds the values `pointers` (and their ancestors) name in `text`.
    pub fn scan<'p>(text: &str, pointers: impl IntoIterator<Item = &'p str>) -> Self {
        let mut root = Node::default();
        for pointer in pointers {
            let mut node = &mut root;
            for token in tokens(pointer).take(MAX_POINTER_DEPTH) {
                node = node.children.entry(token).or_default();
            }
        }
        let mut scanner = Scanner { bytes: text.as_bytes(), pos: 0, cursor: Cursor::default() };
        scanner.skip_ws();
        scanner.value(&mut root, 0);
        Self { root }
    }

    /// The position of `pointer`, or of its nearest ancestor that was found.
    pub fn find(&self, pointer: &str) -> Option<(usize, usize)> {
        let mut node = &self.root;
        let mut found = node.position;
        for token in tokens(pointer) {
            match node.children.get(&token) {
                Some(child) => node = child,
                None => break,
            }
            found = node.position.or(found);
        }
        found
    }

    /// The position of the key of the member `pointer` names, if that
    /// member was found; else [`find`](Self::find)'s answer.
    pub fn find_key(&self, pointer: &str) -> Option<(usize, usize)> {
        let mut node = &self.root;
        for token in tokens(pointer) {
            match node.children.get(&token) {
                Some(child) => node = child,
                None => return self.find(pointer),
            }
        }
        node.key_position.or_else(|| self.find(pointer))
    }

    /// Fills in line and column of each diagnostic that has none.
    pub fn annotate(text: &str, diagnostics: &mut [Diagnostic]) {
        let missing = diagnostics.iter().filter(|d| d.line.is_none()).map(|d| d.pointer.as_str());
        let locations = Self::scan(text, missing);
        for d in diagnostics.iter_mut().filter(|d| d.line.is_none()) {
            let found = if d.at_key { locations.find_key(&d.pointer) } else { locations.find(&d.pointer) };
            if let Some((l, c)) = found {
                d.line = Some(l);
                d.column = Some(c);
            }
        }
    }
}

/// The unescaped reference tokens of an RFC 6901 pointer (`""` has none).
fn tokens(pointer: &str) -> impl Iterator<Item = String> + '_ {
    pointer.split('/').skip(1).map(|t| t.replace("~1", "/").replace("~0", "~"))
}

/// Pointers deeper than this are located at their ancestor of this depth
/// (manifest diagnostics are at most a few levels deep).
const MAX_POINTER_DEPTH: usize = 32;

struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
    cursor: Cursor,
}

/// Line and column of a byte offset, advanced forward only: the scanner
/// records offsets in increasing order, so locating them all is linear.
#[derive(Default)]
struct Cursor {
    offset: usize,
    line: usize,
    /// Characters since the start of the line.
    chars: usize,
}

impl Cursor {
    /// 1-based line and column of `offset` (at or after the last one).
    fn locate(&mut self, bytes: &[u8], offset: usize) -> (usize, usize) {
        for &b in &bytes[self.offset.min(bytes.len())..offset.min(bytes.len())] {
            if b == b'\n' {
                self.line += 1;
                self.chars = 0;
            } else if b & 0xC0 != 0x80 {
                // Not a UTF-8 continuation byte: a new character.
                self.chars += 1;
            }
        }
        self.offset = self.offset.max(offset);
        (self.line + 1, self.chars + 1)
    }
}

impl Scanner<'_> {
    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// Records where the value at `node` starts, then reads it: into the
    /// children the trie asks about, skipping the rest. Recursion follows
    /// the trie only, so its depth is at most [`MAX_POINTER_DEPTH`].
    /// Consumes at least one byte unless at the end or at `,`, `}` or `]`,
    /// so callers' loops advance.
    fn value(&mut self, node: &mut Node, depth: usize) {
        node.position = Some(self.cursor.locate(self.bytes, self.pos));
        if node.children.is_empty() || depth >= MAX_POINTER_DEPTH {
            self.skip_value();
            return;
        }
        match self.peek() {
            Some(b'{') => {
                self.pos += 1;
                loop {
                    self.skip_ws();
                    match self.peek() {
                        None => return,
                        Some(b'}') => {
                            self.pos += 1;
                            return;
                        }
                        Some(b'"') => {
                            let key_at = self.pos;
                            let key = self.string();
                            self.skip_ws();
                            if self.peek() == Some(b':') {
                                self.pos += 1;
                            }
                            self.skip_ws();
                            match key.and_then(|k| node.children.get_mut(&k)) {
                                Some(child) => {
                                    // Before the value's: positions are located in order.
                                    child.key_position = Some(self.cursor.locate(self.bytes, key_at));
                                    self.value(child, depth + 1)
                                }
                                None => self.skip_value(),
                            }
                        }
                        // `,`, and any stray byte of text that is not JSON.
                        Some(_) => self.pos += 1,
                    }
                }
            }
            Some(b'[') => {
                self.pos += 1;
                let mut index = 0usize;
                loop {
                    self.skip_ws();
                    match self.peek() {
                        None => return,
                        Some(b']') => {
                            self.pos += 1;
                            return;
                        }
                        // `,`, and a stray `}` of text that is not JSON.
                        Some(b',' | b'}') => self.pos += 1,
                        Some(_) => {
                            match node.children.get_mut(&index.to_string()) {
                                Some(child) => self.value(child, depth + 1),
                                None => self.skip_value(),
                            }
                            index += 1;
                        }
                    }
                }
            }
            _ => self.skip_value(),
        }
    }

    /// Skips one value without recursion: a string, a bracketed value
    /// (brackets counted, strings inside skipped whole) or a scalar.
    fn skip_value(&mut self) {
        let mut depth = 0usize;
        loop {
            match self.peek() {
                None => return,
                Some(b'"') => self.skip_string(),
                Some(b'{' | b'[') => {
                    depth += 1;
                    self.pos += 1;
                }
                Some(b'}' | b']') => {
                    if depth == 0 {
                        return; // the end of the enclosing value
                    }
                    depth -= 1;
                    self.pos += 1;
                }
                Some(b',') if depth == 0 => return,
                Some(_) => self.pos += 1,
            }
            if depth == 0 && !self.scalar_continues() {
                return;
            }
        }
    }

    /// After a token at depth 0: whether the same scalar goes on.
    fn scalar_continues(&self) -> bool {
        let previous = self.pos.checked_sub(1).and_then(|i| self.bytes.get(i)).copied();
        let closed = matches!(previous, Some(b'"' | b'}' | b']'));
        !closed && !matches!(self.peek(), None | Some(b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t'))
    }

    /// Skips a string literal starting at `"`; an unterminated one runs to
    /// the end of the text.
    fn skip_string(&mut self) {
        self.pos = (self.pos + 1).min(self.bytes.len());
        while let Some(b) = self.peek() {
            self.pos += 1;
            match b {
                b'"' => return,
                b'\\' => self.pos = (self.pos + 1).min(self.bytes.len()),
                _ => {}
            }
        }
    }

    /// Reads a string literal starting at `"`: its value, or `None` when it
    /// is not a valid JSON string.
    fn string(&mut self) -> Option<String> {
        let start = self.pos;
        self.skip_string();
        serde_json::from_slice::<String>(&self.bytes[start..self.pos]).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locates_pointers() {
        let text = "{\n  \"a\": [1, {\"b/c\": \"x\"}],\n  \"é\": true\n}";
        let loc = Locations::scan(text, ["", "/a/1/b~1c", "/é", "/a/1/zzz"]);
        assert_eq!(loc.find(""), Some((1, 1)));
        assert_eq!(loc.find("/a"), Some((2, 8)));
        assert_eq!(loc.find("/a/1"), Some((2, 12)));
        assert_eq!(loc.find("/a/1/b~1c"), Some((2, 20)));
        assert_eq!(loc.find("/é"), Some((3, 8)));
        // A missing child falls back to its parent.
        assert_eq!(loc.find("/a/1/zzz"), Some((2, 12)));
        // A member's key, for problems with the key itself.
        assert_eq!(loc.find_key("/a/1/b~1c"), Some((2, 13)));
        assert_eq!(loc.find_key("/é"), Some((3, 3)));
        assert_eq!(loc.find_key("/a/1/zzz"), Some((2, 12)));
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
