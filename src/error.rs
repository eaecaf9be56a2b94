//! One error type for the library: every variant renders as a single line naming where the
//! problem is (file:line:col, table/row/field, instruction), so the CLI can print it and exit 2.

use std::fmt;

/// Where in a text input something went wrong.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Location {
    /// The file (or a name for a text that is not one, such as `lhs`).
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub col: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

/// Every error of the library; each renders as one line.
#[allow(missing_docs)]
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Malformed text (s-expression, spec, expression, query): where and what was expected.
    #[error("{loc}: {msg}")]
    Parse { loc: Location, msg: String },
    /// A well-formed expression whose types do not fit.
    #[error("{loc}: type error: {msg}")]
    Type { loc: Location, msg: String },
    /// Bad data in a table, CSV file or database.
    #[error("{source_name}: {msg}")]
    Data { source_name: String, msg: String },
    /// A file or directory could not be read or written.
    #[error("{path}: {err}")]
    Io { path: String, err: std::io::Error },
    /// Writing the answer to standard output failed (a closed pipe, a full disk).
    #[error("standard output: {0}")]
    Stdout(std::io::Error),
    /// SQLite failed.
    #[error("database: {0}")]
    Sql(#[from] rusqlite::Error),
    /// A request that names something unknown or is otherwise unusable.
    #[error("{0}")]
    Usage(String),
    /// Selection passed isadb's budget of e-graph size or time.
    #[error("{0}")]
    Budget(String),
    /// An external tool (compiler, emulator, solver) failed.
    #[error("{0}")]
    Tool(String),
}

/// The library's result.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Malformed text at `loc`.
    pub fn parse(loc: &Location, msg: impl Into<String>) -> Error {
        Error::Parse {
            loc: loc.clone(),
            msg: msg.into(),
        }
    }
    /// A type error at `loc`.
    pub fn ty(loc: &Location, msg: impl Into<String>) -> Error {
        Error::Type {
            loc: loc.clone(),
            msg: msg.into(),
        }
    }
    /// Bad data in the named table, file or database.
    pub fn data(source_name: impl Into<String>, msg: impl Into<String>) -> Error {
        Error::Data {
            source_name: source_name.into(),
            msg: msg.into(),
        }
    }
    /// A file system error on `path`.
    pub fn io(path: impl AsRef<std::path::Path>, err: std::io::Error) -> Error {
        Error::Io {
            path: path.as_ref().display().to_string(),
            err,
        }
    }
}

/// A text file's contents; bytes that are not UTF-8 are an error naming the file, line and
/// column where they start.
pub fn read_text(path: impl AsRef<std::path::Path>) -> Result<String> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let good = &bytes[..e.utf8_error().valid_up_to()];
        let line_start = good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let loc = Location {
            file: path.display().to_string(),
            line: good.iter().filter(|&&b| b == b'\n').count() + 1,
            col: String::from_utf8_lossy(&good[line_start..]).chars().count() + 1,
        };
        Error::parse(&loc, "bytes that are not UTF-8 text")
    })
}

/// An error message of another library on one line: its lines joined, and runs of space
/// (regex errors draw a caret under the pattern) squeezed.
pub fn one_line(e: &impl fmt::Display) -> String {
    e.to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Writes one line to standard error; a closed or broken stderr is ignored, never a panic.
pub fn note(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Words longer than this are cut when a message is shown.
const MAX_SHOWN_WORD: usize = 80;

/// A message as shown to the user: a word over [`MAX_SHOWN_WORD`] characters (a 120 KB name
/// typed by mistake, repeated by "unknown instruction '...'") keeps its first 60 characters
/// and says how long it was, so an error stays one readable line.
pub fn elide_long_words(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len().min(4096));
    for (i, word) in msg.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let chars = word.chars().count();
        if chars > MAX_SHOWN_WORD {
            out.extend(word.chars().take(60));
            out.push_str(&format!("...({chars} characters)"));
        } else {
            out.push_str(word);
        }
    }
    out
}
