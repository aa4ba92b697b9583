//! "Did you mean" for misspelled names: the closest candidate by edit
//! distance, within a bound that grows with the name's length (as rustc
//! does), so a one-letter name does not "match" every other one.

/// Edit distance between `a` and `b` in characters: insertions,
/// deletions, substitutions and swaps of two neighbours (the commonest
/// typo, `Bnak` for `Bank`) each count one (optimal string alignment).
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rows of the dynamic-programming table: names are short, and
    // this only runs on the error path.
    let mut prev2 = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                cur[j] = cur[j].min(prev2[j - 2] + 1);
            }
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The candidate closest to `name`, if any is close enough: at most a
/// third of the name's length (at least 1) edits away. Ties go to the
/// alphabetically first candidate, so the suggestion does not depend on
/// hash-map order.
pub(crate) fn closest<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .filter(|c| *c != name)
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("Acount", "Account"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("Strng", "String"), 1);
        assert_eq!(edit_distance("Bnak", "Bank"), 1);
        assert_eq!(edit_distance("ab", "ba"), 1);
    }

    #[test]
    fn closest_within_limit() {
        let names = ["Account", "Amount", "Bank"];
        assert_eq!(closest("Acount", names), Some("Account"));
        assert_eq!(closest("Bnak", names), Some("Bank"));
        // Too far: 4 letters allow one edit.
        assert_eq!(closest("Zzzz", names), None);
        // A one-letter name only matches names one edit away.
        assert_eq!(closest("X", ["Y", "XYZ"]), Some("Y"));
    }

    #[test]
    fn ties_are_alphabetical() {
        assert_eq!(closest("ab", ["ac", "aa"]), Some("aa"));
    }
}
