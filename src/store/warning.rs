//! One entry of a run's stored warnings. schedlab writes each as a line of text; an entry
//! of another kind (written by hand, or by a newer schedlab) is read as its compact JSON
//! text (`3`, `{"code":7}`), so it is shown rather than dropped.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// A stored warning as a line of text.
pub struct StoredWarning(pub String);

impl<'de> Deserialize<'de> for StoredWarning {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(AsText { bare_strings: true }).map(StoredWarning)
    }
}

/// A value nested in a non-text entry, as its JSON (strings quoted).
struct JsonText(String);

impl<'de> Deserialize<'de> for JsonText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(AsText { bare_strings: false }).map(JsonText)
    }
}

/// Reads any value as compact JSON text; a string at the top of an entry as itself.
struct AsText {
    bare_strings: bool,
}

fn json<E: de::Error>(value: impl serde::Serialize) -> Result<String, E> {
    serde_json::to_string(&value).map_err(E::custom)
}

impl<'de> Visitor<'de> for AsText {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a warning")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        if self.bare_strings {
            Ok(v.to_string())
        } else {
            json(v)
        }
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<String, E> {
        json(v)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<String, E> {
        json(v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<String, E> {
        json(v)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<String, E> {
        json(v)
    }

    fn visit_unit<E: de::Error>(self) -> Result<String, E> {
        Ok("null".into())
    }

    fn visit_none<E: de::Error>(self) -> Result<String, E> {
        Ok("null".into())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<String, A::Error> {
        let mut items = Vec::new();
        while let Some(JsonText(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(format!("[{}]", items.join(",")))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<String, A::Error> {
        let mut entries = Vec::new();
        while let Some((key, JsonText(value))) = map.next_entry::<String, JsonText>()? {
            entries.push(format!("{}:{value}", json::<A::Error>(key)?));
        }
        Ok(format!("{{{}}}", entries.join(",")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(stored: &str) -> Vec<String> {
        serde_json::from_str::<Vec<StoredWarning>>(stored).unwrap().into_iter().map(|w| w.0).collect()
    }

    #[test]
    fn lines_are_themselves_and_other_entries_their_json() {
        assert_eq!(read(r#"["a \"quoted\" line", "two"]"#), ["a \"quoted\" line", "two"]);
        assert_eq!(
            read(r#"[3, 2.5, true, null, ["x", 1], {"code": 7, "why": "a\nb", "at": {}}]"#),
            ["3", "2.5", "true", "null", r#"["x",1]"#, r#"{"code":7,"why":"a\nb","at":{}}"#]
        );
        assert!(serde_json::from_str::<Vec<StoredWarning>>(r#"{"not": "a list"}"#).is_err());
    }
}
