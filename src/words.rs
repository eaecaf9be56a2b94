//! Words shared by the user, the files and the database: "did you mean" suggestions for a name
//! that is not known, and enums with one text name per variant ([`text_enum!`]), converted to
//! and from text only at the edges (CSV, SQL, the command line, egglog text).

/// " (did you mean X?)" for the closest known name, or nothing.
pub fn did_you_mean(name: &str, known: &[&str]) -> String {
    let best = known
        .iter()
        .map(|k| (edit_distance(name, k), *k))
        .filter(|(d, k)| *d > 0 && *d <= (k.len().max(name.len()) / 3).max(2))
        .min();
    best.map_or_else(String::new, |(_, k)| format!(" (did you mean '{k}'?)"))
}

/// Words longer than this are never close to a known name: their edit distance is not computed
/// (it takes time quadratic in the length), so a suggestion search stays fast on any input.
pub const MAX_SUGGESTION_CHARS: usize = 200;

/// Edit distance counting a swap of neighbours as one edit (optimal string alignment), for
/// suggestions: `epi61` is one edit from `epi16`. For a word over [`MAX_SUGGESTION_CHARS`], the
/// longer length (an upper bound, far from any suggestion).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len().max(b.len()) > MAX_SUGGESTION_CHARS {
        return a.len().max(b.len());
    }
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

/// Declares an enum whose variants are each named by one word of text, with `ALL`, `as_str`,
/// `parse`, `Display`, `FromStr` (an unknown word is an error naming the known ones), serde as
/// that word, and SQLite storage as that word (`ToSql`, `FromSql`), so the text exists only at
/// the edges:
///
/// ```text
/// text_enum! {
///     /// How a rule is used.
///     pub enum RuleKind("rule kind") { Lift = "lift", Lower = "lower" }
/// }
/// ```
macro_rules! text_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident($noun:literal) {
            $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The word naming this variant in files, the database and on the command line.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// The variant named `text`, if any.
            pub fn parse(text: &str) -> Option<$name> {
                Self::ALL.iter().copied().find(|v| v.as_str() == text)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = String;

            /// An unknown word is an error with a suggestion and the known words.
            fn from_str(text: &str) -> std::result::Result<$name, String> {
                $name::parse(text).ok_or_else(|| {
                    let known: Vec<&str> = Self::ALL.iter().map(|v| v.as_str()).collect();
                    format!(
                        "unknown {} '{text}'{}; one of {}",
                        $noun,
                        $crate::words::did_you_mean(text, &known),
                        known.join(", ")
                    )
                })
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(
                &self,
                s: S,
            ) -> std::result::Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl rusqlite::types::ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
                Ok(rusqlite::types::ToSqlOutput::from(self.as_str()))
            }
        }

        impl rusqlite::types::FromSql for $name {
            fn column_result(
                value: rusqlite::types::ValueRef<'_>,
            ) -> rusqlite::types::FromSqlResult<$name> {
                value
                    .as_str()?
                    .parse()
                    .map_err(|e: String| rusqlite::types::FromSqlError::Other(e.into()))
            }
        }
    };
}
pub(crate) use text_enum;
