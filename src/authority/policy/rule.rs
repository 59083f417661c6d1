//! oslo.policy's rule language: parsing and evaluation.
//!
//! Checks: `@` (always), `!` (never), `role:R`, `rule:NAME`, and the generic
//! `KEY:VALUE`, where KEY names a credential (`user_id`, `project_id`,
//! `project_name`, `system_scope`, `domain_id`, `is_admin`, `roles`) or is a
//! quoted literal, and VALUE is a literal or `%(target.attr)s` taken from the
//! target. Operators: `not` > `and` > `or`, with parentheses. A check whose
//! target attribute is missing is false, as in oslo.

use std::borrow::Cow;
use std::collections::BTreeMap;

/// A parsed rule. Each check's kind and value are classified once, here,
/// so evaluating (every request, every entry of a bulk release) matches
/// enums and borrows strings instead of reading the rule's text again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rule {
    Always,
    Never,
    Not(Box<Rule>),
    And(Vec<Rule>),
    Or(Vec<Rule>),
    Role(Value),
    Ref(String),
    Generic { kind: Credential, value: Value },
}

/// A check's VALUE: a literal, one whole `%(key)s` (every default rule's),
/// or text with `%(key)s` parts to fill in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Literal(String),
    Attribute(String),
    Template(String),
}

impl From<&str> for Value {
    fn from(text: &str) -> Value {
        if !text.contains("%(") {
            return Value::Literal(text.to_owned());
        }
        match text.strip_prefix("%(").and_then(|v| v.strip_suffix(")s")) {
            Some(key) if !key.contains(")s") && !key.contains("%(") => Value::Attribute(key.to_owned()),
            _ => Value::Template(text.to_owned()),
        }
    }
}

impl Value {
    /// The value against `target`; `None` when an attribute is missing.
    fn resolve<'v>(&'v self, target: &'v dyn Attributes) -> Option<Cow<'v, str>> {
        match self {
            Value::Literal(text) => Some(Cow::Borrowed(text)),
            Value::Attribute(key) => target.get(key).map(Cow::Borrowed),
            Value::Template(text) => substitute(text, target),
        }
    }
}

/// What a generic `KIND:VALUE` check compares its value with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    UserId,
    ProjectId,
    ProjectName,
    SystemScope,
    IsAdmin,
    Roles,
    /// `True:…` / `False:…`: the kind's own text compared with the value.
    Boolean(&'static str),
    /// `'text':…` (or double-quoted): the literal compared with the value.
    Quoted(String),
    /// Any other kind: never true, as in oslo for an unregistered check.
    Unknown(String),
}

impl From<&str> for Credential {
    fn from(kind: &str) -> Credential {
        let quoted = ['\'', '"'].iter().find_map(|q| kind.strip_prefix(*q).and_then(|k| k.strip_suffix(*q)));
        if let Some(literal) = quoted {
            return Credential::Quoted(literal.to_owned());
        }
        match kind {
            "True" => Credential::Boolean("True"),
            "False" => Credential::Boolean("False"),
            "user_id" => Credential::UserId,
            "project_id" => Credential::ProjectId,
            "project_name" => Credential::ProjectName,
            "system_scope" => Credential::SystemScope,
            "is_admin" => Credential::IsAdmin,
            "roles" => Credential::Roles,
            other => Credential::Unknown(other.to_owned()),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Open,
    Close,
    And,
    Or,
    Not,
    Check(String),
}

fn tokenize(text: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    for word in text.split_whitespace() {
        let mut word = word;
        while let Some(rest) = word.strip_prefix('(') {
            tokens.push(Token::Open);
            word = rest;
        }
        let mut closes = 0;
        while let Some(rest) = word.strip_suffix(')') {
            closes += 1;
            word = rest;
        }
        if !word.is_empty() {
            tokens.push(match word.to_ascii_lowercase().as_str() {
                "and" => Token::And,
                "or" => Token::Or,
                "not" => Token::Not,
                _ => Token::Check(word.to_owned()),
            });
        }
        tokens.extend(std::iter::repeat_n(Token::Close, closes));
    }
    tokens
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }
    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.pos).cloned();
        self.pos += 1;
        t
    }
    fn or(&mut self) -> Result<Rule, String> {
        let mut terms = vec![self.and()?];
        while self.peek() == Some(&Token::Or) {
            self.pos += 1;
            terms.push(self.and()?);
        }
        Ok(if terms.len() == 1 { terms.remove(0) } else { Rule::Or(terms) })
    }
    fn and(&mut self) -> Result<Rule, String> {
        let mut terms = vec![self.not()?];
        while self.peek() == Some(&Token::And) {
            self.pos += 1;
            terms.push(self.not()?);
        }
        Ok(if terms.len() == 1 { terms.remove(0) } else { Rule::And(terms) })
    }
    fn not(&mut self) -> Result<Rule, String> {
        if self.peek() == Some(&Token::Not) {
            self.pos += 1;
            return Ok(Rule::Not(Box::new(self.not()?)));
        }
        self.atom()
    }
    fn atom(&mut self) -> Result<Rule, String> {
        match self.next() {
            Some(Token::Open) => {
                let inner = self.or()?;
                match self.next() {
                    Some(Token::Close) => Ok(inner),
                    _ => Err("unbalanced parenthesis: a '(' is never closed".into()),
                }
            }
            Some(Token::Check(check)) => parse_check(&check),
            Some(Token::Close) => Err("unexpected ')'".into()),
            Some(t) => Err(format!("expected a check, found '{}'", token_text(&t))),
            None => Err("the rule ends where a check was expected".into()),
        }
    }
}

fn token_text(t: &Token) -> &str {
    match t {
        Token::And => "and",
        Token::Or => "or",
        Token::Not => "not",
        Token::Open => "(",
        Token::Close => ")",
        Token::Check(c) => c,
    }
}

fn parse_check(check: &str) -> Result<Rule, String> {
    match check {
        "@" => return Ok(Rule::Always),
        "!" => return Ok(Rule::Never),
        _ => {}
    }
    let Some((kind, value)) = check.split_once(':') else {
        return Err(format!("'{check}' is not a check (expected KIND:VALUE, @ or !)"));
    };
    match kind {
        "role" => Ok(Rule::Role(Value::from(value))),
        "rule" => Ok(Rule::Ref(value.to_owned())),
        "http" | "https" => Err(format!("'{check}': remote http checks are not supported")),
        _ => Ok(Rule::Generic { kind: Credential::from(kind), value: Value::from(value) }),
    }
}

/// Parses a check string; an empty string means "always", as in oslo.
pub fn parse(text: &str) -> Result<Rule, String> {
    let tokens = tokenize(text);
    if tokens.is_empty() {
        return Ok(Rule::Always);
    }
    let mut parser = Parser { tokens, pos: 0 };
    let rule = parser.or()?;
    match parser.peek() {
        None => Ok(rule),
        Some(Token::Close) => Err("unbalanced parenthesis: unexpected ')'".into()),
        Some(t) => Err(format!("unexpected '{}' after a complete rule", token_text(t))),
    }
}

/// The credentials a check reads.
pub struct Creds<'a> {
    pub user_id: &'a str,
    pub project_id: Option<&'a str>,
    pub project_name: Option<&'a str>,
    pub roles: &'a [String],
    pub system_scope: bool,
}

/// What a rule's `%(key)s` reads: flat, dotted attributes such as
/// `node.owner` or `maintenance.asserted_by`; `None` for a missing one.
pub trait Attributes {
    fn get(&self, key: &str) -> Option<&str>;
}

impl Attributes for BTreeMap<String, String> {
    fn get(&self, key: &str) -> Option<&str> {
        BTreeMap::get(self, key).map(String::as_str)
    }
}

/// Every `%(key)s` of a template replaced from the target; `None` when a
/// key is missing.
fn substitute<'v>(value: &'v str, target: &'v dyn Attributes) -> Option<Cow<'v, str>> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("%(") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find(")s")?;
        out.push_str(target.get(&after[..end])?);
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Some(Cow::Owned(out))
}

impl Rule {
    /// Evaluates with `lookup` resolving `rule:NAME` (depth-limited against cycles).
    pub fn eval<'r>(
        &self,
        creds: &Creds,
        target: &dyn Attributes,
        lookup: &dyn Fn(&str) -> Option<&'r Rule>,
        depth: u8,
    ) -> bool {
        if depth > 32 {
            return false;
        }
        match self {
            Rule::Always => true,
            Rule::Never => false,
            Rule::Not(r) => !r.eval(creds, target, lookup, depth),
            Rule::And(rs) => rs.iter().all(|r| r.eval(creds, target, lookup, depth)),
            Rule::Or(rs) => rs.iter().any(|r| r.eval(creds, target, lookup, depth)),
            Rule::Ref(name) => lookup(name).is_some_and(|r| r.eval(creds, target, lookup, depth + 1)),
            Rule::Role(role) => {
                role.resolve(target).is_some_and(|role| creds.roles.iter().any(|have| have.eq_ignore_ascii_case(&role)))
            }
            Rule::Generic { kind, value } => {
                let Some(value) = value.resolve(target) else { return false };
                let value = value.as_ref();
                match kind {
                    Credential::Quoted(literal) => literal == value,
                    Credential::Boolean(text) => *text == value,
                    Credential::UserId => creds.user_id == value,
                    Credential::ProjectId => creds.project_id == Some(value),
                    Credential::ProjectName => creds.project_name == Some(value),
                    Credential::SystemScope => creds.system_scope && value == "all",
                    Credential::IsAdmin => value == "False",
                    Credential::Roles => creds.roles.iter().any(|r| r.eq_ignore_ascii_case(value)),
                    Credential::Unknown(_) => false,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn creds<'a>(roles: &'a [String], project: Option<&'a str>, system: bool) -> Creds<'a> {
        Creds { user_id: "u1", project_id: project, project_name: Some("service"), roles, system_scope: system }
    }

    fn eval(text: &str, c: &Creds, target: &BTreeMap<String, String>) -> bool {
        parse(text).unwrap().eval(c, target, &|name| (name == "yes").then_some(&Rule::Always), 0)
    }

    #[test]
    fn precedence_is_not_and_or() {
        assert_eq!(
            parse("role:a or role:b and not role:c").unwrap(),
            Rule::Or(vec![
                Rule::Role("a".into()),
                Rule::And(vec![Rule::Role("b".into()), Rule::Not(Box::new(Rule::Role("c".into())))])
            ])
        );
        assert_eq!(parse("(role:a)").unwrap(), Rule::Role("a".into()));
        assert_eq!(parse("").unwrap(), Rule::Always);
    }

    #[test]
    fn checks_read_credentials_and_target() {
        let roles = vec!["member".to_owned()];
        let mut target = BTreeMap::new();
        target.insert("node.owner".into(), "p1".into());
        target.insert("maintenance.asserted_by".into(), "u1".into());
        let c = creds(&roles, Some("p1"), false);
        assert!(eval("role:member and project_id:%(node.owner)s", &c, &target));
        assert!(eval("role:MEMBER", &c, &target), "roles compare case-insensitively");
        assert!(!eval("project_id:%(node.lessee)s", &c, &target), "a missing attribute is false");
        assert!(eval("user_id:%(maintenance.asserted_by)s", &c, &target));
        assert!(!eval("system_scope:all", &c, &target));
        assert!(eval("system_scope:all", &creds(&roles, None, true), &target));
        assert!(eval("rule:yes and @ and not !", &c, &target));
        assert!(!eval("rule:missing", &c, &target));
        assert!(eval("'p1':%(node.owner)s", &c, &target));
        assert!(eval("project_name:service", &c, &target));
        // Values classified at parse time: a template with a literal part, a missing attribute in one.
        target.insert("node.name".into(), "n1".into());
        assert!(eval("'n1-p1':%(node.name)s-%(node.owner)s", &c, &target));
        assert!(!eval("'n1-':%(node.name)s-%(node.lessee)s", &c, &target));
        assert!(eval("True:True and not False:True", &c, &target));
        assert!(!eval("domain_id:%(node.owner)s", &c, &target), "an unknown credential is never true");
        assert_eq!(
            parse("user_id:%(maintenance.asserted_by)s").unwrap(),
            Rule::Generic { kind: Credential::UserId, value: Value::Attribute("maintenance.asserted_by".into()) }
        );
    }

    #[test]
    fn syntax_errors_say_what_is_wrong() {
        assert!(parse("role:a and (role:b").unwrap_err().contains("never closed"));
        assert!(parse("role:a)").unwrap_err().contains("unexpected ')'"));
        assert!(parse("role:a and").unwrap_err().contains("ends where a check"));
        assert!(parse("admin").unwrap_err().contains("is not a check"));
        assert!(parse("http://x:1").unwrap_err().contains("not supported"));
    }
}
