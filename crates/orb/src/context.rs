//! Operation contexts: the name/value string properties an IDL operation
//! with a `context("NAME", "PREFIX*")` clause carries.
//!
//! A caller fills a [`Context`] and hands it to the generated stub, which
//! sends only the properties the clause names ([`Context::matches`]); on
//! the wire they follow the arguments as one `sequence<string>` holding
//! name, value, name, value... The generated skeleton reads them back
//! ([`Context::decode`]) and hands them to the servant.

use peregrine_cdr::{Reader, Writer};
use peregrine_giop::system_exception::minor;
use peregrine_giop::{CompletionStatus, SystemException, SystemExceptionKind};

/// Name/value string properties sent with an operation that has an IDL
/// `context` clause (CORBA's `Context` object, flattened: no parent
/// contexts or scopes, which the wire never shows).
///
/// Properties keep the order they were first set in; setting a name again
/// replaces its value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Context {
    props: Vec<(String, String)>,
}

impl Context {
    /// An empty context.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets property `name` to `value` (replacing an earlier value).
    pub fn set(&mut self, name: impl Into<String>, value: impl Into<String>) -> &mut Self {
        let (name, value) = (name.into(), value.into());
        match self.props.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => *v = value,
            None => self.props.push((name, value)),
        }
        self
    }

    /// The context with property `name` set to `value`.
    #[must_use]
    pub fn with(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.set(name, value);
        self
    }

    /// The value of property `name`, if set.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.props
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Removes property `name`; true if it was set.
    pub fn remove(&mut self, name: &str) -> bool {
        let before = self.props.len();
        self.props.retain(|(n, _)| n != name);
        self.props.len() != before
    }

    /// The properties as `(name, value)`, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.props.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }

    /// The number of properties.
    pub fn len(&self) -> usize {
        self.props.len()
    }

    /// True if no property is set.
    pub fn is_empty(&self) -> bool {
        self.props.is_empty()
    }

    /// True if property `name` is selected by one of `patterns`, the
    /// strings of a `context` clause: a pattern is a property name, or,
    /// ending in `*`, the prefix of property names.
    pub fn matches(name: &str, patterns: &[&str]) -> bool {
        patterns.iter().any(|p| match p.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == *p,
        })
    }

    /// The properties selected by `patterns` (see [`matches`](Self::matches)),
    /// each once, in order.
    pub fn matching<'a>(
        &'a self,
        patterns: &'a [&str],
    ) -> impl Iterator<Item = (&'a str, &'a str)> {
        self.iter().filter(|(n, _)| Self::matches(n, patterns))
    }

    /// Writes the properties selected by `patterns` as an operation
    /// context: a `sequence<string>` of name, value, name, value...
    pub fn encode_matching(&self, patterns: &[&str], w: &mut Writer) -> peregrine_cdr::Result<()> {
        w.write_len(2 * self.matching(patterns).count())?;
        for (n, v) in self.matching(patterns) {
            w.write_string(n)?;
            w.write_string(v)?;
        }
        Ok(())
    }

    /// Writes every property as an operation context (what a dynamic
    /// request whose properties were already selected sends).
    pub fn encode(&self, w: &mut Writer) -> peregrine_cdr::Result<()> {
        self.encode_matching(&["*"], w)
    }

    /// Reads an operation context written by
    /// [`encode_matching`](Self::encode_matching). An odd number of strings
    /// is `MARSHAL` ([`minor::MARSHAL_INVALID_CONTEXT`]); malformed strings
    /// get the CDR error's exception.
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, SystemException> {
        // Each string takes at least its length and NUL: 5 bytes.
        let n = r.read_len(5)?;
        if n % 2 != 0 {
            return Err(SystemException::new(
                SystemExceptionKind::Marshal,
                minor::MARSHAL_INVALID_CONTEXT,
                CompletionStatus::No,
            ));
        }
        let mut props: Vec<(String, String)> = Vec::with_capacity(n / 2);
        for _ in 0..n / 2 {
            props.push((r.read_string()?, r.read_string()?));
        }
        if props.len() > 1 {
            dedup_keeping_last_value(&mut props);
        }
        Ok(Self { props })
    }
}

/// Duplicate names (a peer may send them): the last value wins, in the
/// place of the first, as with [`Context::set`]. Found through an index
/// borrowing the names, since a message may hold a great many of them.
fn dedup_keeping_last_value(props: &mut Vec<(String, String)>) {
    let mut first = std::collections::HashMap::with_capacity(props.len());
    // (later index, index of the first with its name)
    let mut dups = Vec::new();
    for (i, (name, _)) in props.iter().enumerate() {
        if let Some(&f) = first.get(name.as_str()) {
            dups.push((i, f));
        } else {
            first.insert(name.as_str(), i);
        }
    }
    if dups.is_empty() {
        return;
    }
    for &(i, f) in &dups {
        props[f].1 = std::mem::take(&mut props[i].1);
    }
    let mut i = 0;
    let mut d = dups.iter().map(|&(i, _)| i).peekable();
    props.retain(|_| {
        let drop = d.next_if_eq(&i).is_some();
        i += 1;
        !drop
    });
}

impl<'a> FromIterator<(&'a str, &'a str)> for Context {
    fn from_iter<I: IntoIterator<Item = (&'a str, &'a str)>>(iter: I) -> Self {
        let mut ctx = Self::new();
        for (n, v) in iter {
            ctx.set(n, v);
        }
        ctx
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use peregrine_cdr::ByteOrder;

    fn sample() -> Context {
        Context::new()
            .with("LANG", "en")
            .with("X_A", "1")
            .with("LANGUAGE", "no")
            .with("Y", "2")
            .with("X_B", "3")
    }

    #[test]
    fn patterns_select_names_and_prefixes() {
        let ctx = sample();
        let got: Vec<_> = ctx.matching(&["LANG", "X_*"]).collect();
        assert_eq!(got, [("LANG", "en"), ("X_A", "1"), ("X_B", "3")]);
        // A property matched by two patterns goes once.
        let got: Vec<_> = ctx.matching(&["LANG*", "LANG"]).collect();
        assert_eq!(got, [("LANG", "en"), ("LANGUAGE", "no")]);
        assert_eq!(ctx.matching(&["*"]).count(), 5);
        assert_eq!(ctx.matching(&["Z"]).count(), 0);
    }

    #[test]
    fn decoding_keeps_the_last_value_of_a_name_in_its_first_place() {
        let mut w = Writer::new(ByteOrder::Little);
        w.write_len(6).unwrap();
        for s in ["A", "1", "B", "2", "A", "3"] {
            w.write_string(s).unwrap();
        }
        let bytes = w.into_vec();
        let ctx = Context::decode(&mut Reader::new(&bytes, ByteOrder::Little)).unwrap();
        assert_eq!(ctx.iter().collect::<Vec<_>>(), [("A", "3"), ("B", "2")]);
    }

    #[test]
    fn decoding_a_name_sent_three_times_keeps_its_last_value() {
        let mut w = Writer::new(ByteOrder::Big);
        w.write_len(12).unwrap();
        for s in ["A", "1", "B", "2", "A", "3", "C", "4", "B", "5", "A", "6"] {
            w.write_string(s).unwrap();
        }
        let bytes = w.into_vec();
        let ctx = Context::decode(&mut Reader::new(&bytes, ByteOrder::Big)).unwrap();
        assert_eq!(
            ctx.iter().collect::<Vec<_>>(),
            [("A", "6"), ("B", "5"), ("C", "4")]
        );
    }

    #[test]
    fn a_context_of_many_names_decodes_in_one_pass() {
        // 50,000 distinct names: a search per name would take minutes.
        let n = 50_000;
        let mut w = Writer::new(ByteOrder::Little);
        w.write_len(2 * n).unwrap();
        for i in 0..n {
            w.write_string(&format!("N{i}")).unwrap();
            w.write_string("v").unwrap();
        }
        let bytes = w.into_vec();
        let ctx = Context::decode(&mut Reader::new(&bytes, ByteOrder::Little)).unwrap();
        assert_eq!(ctx.len(), n);
        assert_eq!(ctx.get("N49999"), Some("v"));
        let mut again = Writer::new(ByteOrder::Little);
        ctx.encode(&mut again).unwrap();
        assert_eq!(again.into_vec(), bytes);
    }

    #[test]
    fn set_replaces_and_keeps_order() {
        let mut ctx = sample();
        ctx.set("LANG", "fr");
        assert_eq!(ctx.get("LANG"), Some("fr"));
        assert_eq!(ctx.iter().next(), Some(("LANG", "fr")));
        assert!(ctx.remove("Y"));
        assert!(!ctx.remove("Y"));
        assert_eq!(ctx.len(), 4);
    }

    #[test]
    fn encodes_as_string_sequence_of_pairs() {
        let ctx = sample();
        let mut w = Writer::new(ByteOrder::Big);
        ctx.encode_matching(&["Y"], &mut w).unwrap();
        let bytes = w.into_vec();
        #[rustfmt::skip]
        let expected = [
            0, 0, 0, 2,            // two strings
            0, 0, 0, 2, b'Y', 0,   // name
            0, 0,                  // padding
            0, 0, 0, 2, b'2', 0,   // value
        ];
        assert_eq!(bytes, expected);
        let mut r = Reader::new(&bytes, ByteOrder::Big);
        assert_eq!(
            Context::decode(&mut r).unwrap(),
            Context::new().with("Y", "2")
        );
    }

    #[test]
    fn odd_count_is_marshal() {
        let bytes = [0, 0, 0, 1, 0, 0, 0, 2, b'Y', 0];
        let mut r = Reader::new(&bytes, ByteOrder::Big);
        let e = Context::decode(&mut r).unwrap_err();
        assert_eq!(e.kind, SystemExceptionKind::Marshal);
        assert_eq!(e.minor, minor::MARSHAL_INVALID_CONTEXT);
    }

    #[test]
    fn huge_count_is_refused_before_allocating() {
        let bytes = [0x7f, 0xff, 0xff, 0xfe];
        let mut r = Reader::new(&bytes, ByteOrder::Big);
        let e = Context::decode(&mut r).unwrap_err();
        assert_eq!(e.kind, SystemExceptionKind::Marshal);
        assert_eq!(e.minor, minor::MARSHAL_LENGTH_EXCEEDS_INPUT);
    }
}
