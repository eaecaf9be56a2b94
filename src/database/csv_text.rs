//! A minimal RFC 4180 CSV codec that, unlike the csv crate, keeps whether a field was quoted:
//! an unquoted empty field is SQL NULL and a quoted empty field `""` is the empty string.

use crate::error::{Error, Result};

/// One CSV field; `None` is SQL NULL.
pub(super) type Field = Option<String>;

/// A parsed record and the 1-based line it starts on.
pub(super) struct Record {
    pub line: usize,
    pub fields: Vec<Field>,
}

/// Appends one '\n'-terminated record, quoting only the empty string and text containing
/// a comma, quote or line break.
pub(super) fn write_record(out: &mut String, fields: &[Field]) {
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match field.as_deref() {
            None => {}
            Some(s) if s.is_empty() || s.contains([',', '"', '\n', '\r']) => {
                out.push('"');
                out.push_str(&s.replace('"', "\"\""));
                out.push('"');
            }
            Some(s) => out.push_str(s),
        }
    }
    out.push('\n');
}

/// Parses a whole file (records end with "\n" or "\r\n"); errors name `source` and the line.
pub(super) fn parse(text: &str, source: &str) -> Result<Vec<Record>> {
    let err = |line: usize, field: usize, msg: &str| {
        Error::data(source, format!("line {line}: field {field}: {msg}"))
    };
    let mut records = Vec::new();
    let mut chars = text.chars().peekable();
    let mut line = 1;
    while chars.peek().is_some() {
        let start = line;
        let mut fields = Vec::new();
        loop {
            let mut s = String::new();
            if chars.next_if_eq(&'"').is_some() {
                loop {
                    match chars.next() {
                        None => {
                            return Err(err(start, fields.len() + 1, "unterminated quoted field"))
                        }
                        Some('"') if chars.next_if_eq(&'"').is_none() => break,
                        Some(c) => {
                            line += (c == '\n') as usize;
                            s.push(c);
                        }
                    }
                }
                fields.push(Some(s));
            } else {
                while let Some(c) = chars.next_if(|c| !matches!(c, ',' | '\n' | '\r')) {
                    if c == '"' {
                        return Err(err(
                            line,
                            fields.len() + 1,
                            "quote inside an unquoted field",
                        ));
                    }
                    s.push(c);
                }
                fields.push((!s.is_empty()).then_some(s));
            }
            match chars.next() {
                Some(',') => {}
                None => break,
                Some('\n') => {
                    line += 1;
                    break;
                }
                Some('\r') if chars.next_if_eq(&'\n').is_some() => {
                    line += 1;
                    break;
                }
                Some(c) => {
                    return Err(err(
                        line,
                        fields.len(),
                        &format!("unexpected {c:?} after the field"),
                    ))
                }
            }
        }
        records.push(Record {
            line: start,
            fields,
        });
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(s: &str) -> Field {
        Some(s.to_string())
    }

    #[test]
    fn round_trip_keeps_null_empty_and_special_text() {
        let rows = vec![
            vec![
                f("a"),
                None,
                f(""),
                f("x,y"),
                f("say \"hi\""),
                f("two\nlines"),
                f("cr\r\nlf"),
                f("ünï ✓"),
            ],
            vec![None, None, None, None, None, None, None, None],
        ];
        let mut out = String::new();
        rows.iter().for_each(|r| write_record(&mut out, r));
        assert_eq!(
            out.lines().next().unwrap(),
            r#"a,,"","x,y","say ""hi""","two"#
        );
        let back = parse(&out, "t.csv").unwrap();
        assert_eq!(
            back.iter().map(|r| r.fields.clone()).collect::<Vec<_>>(),
            rows
        );
        assert_eq!(back.iter().map(|r| r.line).collect::<Vec<_>>(), [1, 4]);
    }

    #[test]
    fn crlf_and_missing_final_newline() {
        let back = parse("a,b\r\n1,\"\"\r\n2,", "t.csv").unwrap();
        assert_eq!(back.len(), 3);
        assert_eq!(back[1].fields, [f("1"), f("")]);
        assert_eq!(back[2].fields, [f("2"), None]);
    }

    #[test]
    fn malformed_quoting_names_line_and_field() {
        let e = |t: &str| parse(t, "t.csv").err().unwrap().to_string();
        assert_eq!(
            e("a,b\n1,\"open\n"),
            "t.csv: line 2: field 2: unterminated quoted field"
        );
        assert_eq!(
            e("a,b\n1,x\"y\n"),
            "t.csv: line 2: field 2: quote inside an unquoted field"
        );
        assert_eq!(
            e("a,b\n\"q\"z,1\n"),
            "t.csv: line 2: field 1: unexpected 'z' after the field"
        );
    }
}
