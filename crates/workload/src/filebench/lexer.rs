//! The tokens of filebench's workload language, as `parser_lex.l` makes them: words
//! (`[/A-Za-z-][/A-Za-z0-9._:;-]*`), integers with `k`/`m`/`g` suffixes (×1024ⁿ), negative
//! integers, `true`/`false`, variables (`$name`), quoted strings (in which `$var` is a
//! variable and `\n` a newline), `{ } ( ) = ,`; `#` starts a comment, newlines only count
//! lines. Keywords are words: the parser tells them apart by place.

use super::FbError;

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Word(String),
    Int(i64),
    Bool(bool),
    Var(String),
    Quoted(Vec<QPart>),
    LBrace,
    RBrace,
    LParen,
    RParen,
    Assign,
    Comma,
}

/// A piece of a quoted string.
#[derive(Clone, Debug, PartialEq)]
pub enum QPart {
    Text(String),
    Var(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub line: usize,
}

fn word_start(c: u8) -> bool {
    c == b'/' || c == b'-' || c.is_ascii_alphabetic()
}

fn word_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'/' | b'.' | b'_' | b':' | b';' | b'-')
}

/// A variable after `$`: `[({A-Za-z][A-Za-z0-9_]*[A-Za-z0-9][)}]*`; its name without
/// brackets, and the bytes it took.
fn variable(b: &[u8], line: usize) -> Result<(String, usize), FbError> {
    let mut i = 1;
    while i < b.len() && matches!(b[i], b'(' | b'{') {
        i += 1;
    }
    let start = i;
    if i < b.len() && b[i].is_ascii_alphabetic() {
        i += 1;
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            i += 1;
        }
    }
    let name = String::from_utf8_lossy(&b[start..i]).into_owned();
    if name.len() < 2 || name.ends_with('_') {
        return Err(FbError::at(
            line,
            format!(
                "illegal variable name ${name} (filebench's need two or more letters or digits)"
            ),
        ));
    }
    while i < b.len() && matches!(b[i], b')' | b'}') {
        i += 1;
    }
    Ok((name, i))
}

/// Split `src` into tokens; an illegal character or an unterminated string is an error
/// naming its line.
pub fn lex(src: &str) -> Result<Vec<Token>, FbError> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let push = |out: &mut Vec<Token>, tok| out.push(Token { tok, line });
        match c {
            b'\n' => {
                line += 1;
                i += 1;
            }
            b' ' | b'\t' | b'\r' => i += 1,
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'{' | b'}' | b'(' | b')' | b'=' | b',' => {
                push(
                    &mut out,
                    match c {
                        b'{' => Tok::LBrace,
                        b'}' => Tok::RBrace,
                        b'(' => Tok::LParen,
                        b')' => Tok::RParen,
                        b'=' => Tok::Assign,
                        _ => Tok::Comma,
                    },
                );
                i += 1;
            }
            b'$' => {
                let (name, n) = variable(&b[i..], line)?;
                push(&mut out, Tok::Var(name));
                i += n;
            }
            b'"' => {
                let start_line = line;
                i += 1;
                let mut parts = Vec::new();
                let mut text = String::new();
                loop {
                    if i >= b.len() {
                        return Err(FbError::at(start_line, "unterminated quoted string"));
                    }
                    match b[i] {
                        b'"' => {
                            i += 1;
                            break;
                        }
                        b'\\' if b.get(i + 1) == Some(&b'n') => {
                            text.push('\n');
                            i += 2;
                        }
                        b'\\' if b.get(i + 1) == Some(&b'$') => {
                            text.push('$');
                            i += 2;
                        }
                        b'$' => {
                            let (name, n) = variable(&b[i..], line)?;
                            if !text.is_empty() {
                                parts.push(QPart::Text(std::mem::take(&mut text)));
                            }
                            parts.push(QPart::Var(name));
                            i += n;
                        }
                        _ => {
                            let ch = src[i..].chars().next().unwrap_or(' ');
                            if ch == '\n' {
                                line += 1;
                            }
                            text.push(ch);
                            i += ch.len_utf8();
                        }
                    }
                }
                if !text.is_empty() {
                    parts.push(QPart::Text(text));
                }
                out.push(Token {
                    tok: Tok::Quoted(parts),
                    line: start_line,
                });
            }
            b'0'..=b'9' => {
                let start = i;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
                let digits = &src[start..i];
                let mult: i64 = match b.get(i) {
                    Some(b'k') => 1 << 10,
                    Some(b'm') => 1 << 20,
                    Some(b'g') => 1 << 30,
                    _ => 1,
                };
                if mult > 1 {
                    i += 1;
                }
                let v = digits
                    .parse::<i64>()
                    .ok()
                    .and_then(|v| v.checked_mul(mult))
                    .ok_or_else(|| {
                        FbError::at(line, format!("number {} is too large", &src[start..i]))
                    })?;
                push(&mut out, Tok::Int(v));
            }
            b'-' if b.get(i + 1).is_some_and(|d| d.is_ascii_digit())
                && !b[i + 1..]
                    .iter()
                    .take_while(|&&c| word_char(c))
                    .any(|c| !c.is_ascii_digit()) =>
            {
                let start = i;
                i += 1;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
                let v = src[start..i].parse::<i64>().map_err(|_| {
                    FbError::at(line, format!("number {} is too large", &src[start..i]))
                })?;
                push(&mut out, Tok::Int(v));
            }
            _ if word_start(c) => {
                let start = i;
                while i < b.len() && word_char(b[i]) {
                    i += 1;
                }
                let w = &src[start..i];
                push(
                    &mut out,
                    match w {
                        "true" => Tok::Bool(true),
                        "false" => Tok::Bool(false),
                        _ => Tok::Word(w.to_string()),
                    },
                );
            }
            _ => {
                let ch = src[i..].chars().next().unwrap_or('?');
                return Err(FbError::at(line, format!("illegal character {ch:?}")));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_as_flex_makes_them() {
        let t = lex("set $xx=16k # c\nflowop read name=r1,random\necho \"a $xx\\n\"\npsrun -10 20")
            .unwrap();
        let toks: Vec<Tok> = t.iter().map(|t| t.tok.clone()).collect();
        assert_eq!(toks[1], Tok::Var("xx".into()));
        assert_eq!(toks[3], Tok::Int(16384));
        assert_eq!(t[4].line, 2);
        assert!(toks.contains(&Tok::Quoted(vec![
            QPart::Text("a ".into()),
            QPart::Var("xx".into()),
            QPart::Text("\n".into())
        ])));
        assert!(toks.ends_with(&[Tok::Word("psrun".into()), Tok::Int(-10), Tok::Int(20)]));
        let e = lex("set $xx=1\n  @").unwrap_err().to_string();
        assert!(
            e.contains("line 2") && e.contains("illegal character"),
            "{e}"
        );
        assert!(lex("echo \"abc").is_err());
        assert!(lex("set $xx=99999999999999999999g").is_err());
    }
}
