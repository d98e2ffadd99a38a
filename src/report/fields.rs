//! A record's fields as dotted keys and text, in the record's order: `kernel_release`
//! "6.1", `settings.governor` "performance", `load_average` "[0.5,0.4,0.3]". What `trend`
//! and `compare` set side by side where two fingerprints differ. A nested map or struct
//! becomes dotted keys (an empty one none); a string is its text; anything else its
//! compact JSON (`true`, `4`, `2.5`, `null`, a list whole).
//!
//! Read through the record's own `Serialize`, so a stored fingerprint is walked as stored,
//! keys this schedlab does not know included.

use serde::ser::{self, Impossible, Serialize, Serializer};

/// Every field of `record` as (dotted key, text). A tuple or struct enum variant, which
/// no fingerprint holds, has no text: the walk stops there and keeps what it had.
pub fn fields(record: &impl Serialize) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let _ = record.serialize(Fields { key: String::new(), out: &mut out });
    out
}

type Error = serde_json::Error;

/// The walk at one key (empty at the top).
struct Fields<'a> {
    key: String,
    out: &'a mut Vec<(String, String)>,
}

impl<'a> Fields<'a> {
    fn text(self, text: String) -> Result<(), Error> {
        self.out.push((self.key, text));
        Ok(())
    }

    fn json(self, value: &impl Serialize) -> Result<(), Error> {
        let text = serde_json::to_string(value)?;
        self.text(text)
    }

    /// The walk one level down, at `name` under this key.
    fn below(&mut self, name: &str) -> Fields<'_> {
        let key = if self.key.is_empty() { name.to_string() } else { format!("{}.{name}", self.key) };
        Fields { key, out: &mut *self.out }
    }
}

macro_rules! compact_text {
    ($($method:ident: $t:ty),*) => {
        $(fn $method(self, v: $t) -> Result<(), Error> {
            self.json(&v)
        })*
    };
}

impl<'a> Serializer for Fields<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = List<'a>;
    type SerializeTuple = List<'a>;
    type SerializeTupleStruct = List<'a>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Object<'a>;
    type SerializeStruct = Object<'a>;
    type SerializeStructVariant = Impossible<(), Error>;

    compact_text!(serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64,
        serialize_i128: i128, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32, serialize_u64: u64,
        serialize_u128: u128, serialize_f32: f32, serialize_f64: f64, serialize_char: char,
        serialize_bytes: &[u8]);

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.text(v.to_string())
    }

    fn serialize_none(self) -> Result<(), Error> {
        self.text("null".into())
    }

    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), Error> {
        self.text("null".into())
    }

    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        self.text("null".into())
    }

    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<(), Error> {
        self.text(variant.into())
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(self, _: &'static str, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        mut self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self.below(variant))
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<List<'a>, Error> {
        Ok(List { at: self, items: Vec::new() })
    }

    fn serialize_tuple(self, _: usize) -> Result<List<'a>, Error> {
        Ok(List { at: self, items: Vec::new() })
    }

    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<List<'a>, Error> {
        Ok(List { at: self, items: Vec::new() })
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(ser::Error::custom(format!("{}: variant {variant} has no text", self.key)))
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Object<'a>, Error> {
        Ok(Object { at: self, name: String::new() })
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Object<'a>, Error> {
        Ok(Object { at: self, name: String::new() })
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(ser::Error::custom(format!("{}: variant {variant} has no text", self.key)))
    }
}

/// A list: its items' compact JSON, written whole at its key.
struct List<'a> {
    at: Fields<'a>,
    items: Vec<String>,
}

impl List<'_> {
    fn item<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        self.items.push(serde_json::to_string(value)?);
        Ok(())
    }

    fn done(self) -> Result<(), Error> {
        let text = format!("[{}]", self.items.join(","));
        self.at.text(text)
    }
}

impl ser::SerializeSeq for List<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        self.item(value)
    }
    fn end(self) -> Result<(), Error> {
        self.done()
    }
}

impl ser::SerializeTuple for List<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        self.item(value)
    }
    fn end(self) -> Result<(), Error> {
        self.done()
    }
}

impl ser::SerializeTupleStruct for List<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        self.item(value)
    }
    fn end(self) -> Result<(), Error> {
        self.done()
    }
}

/// A map or struct: each entry one level down, at its key.
struct Object<'a> {
    at: Fields<'a>,
    /// The key of the entry whose value comes next.
    name: String,
}

/// A map key as text: a string as itself, anything else (a number) as its JSON.
fn key_text<T: ?Sized + Serialize>(key: &T) -> Result<String, Error> {
    let json = serde_json::to_string(key)?;
    Ok(serde_json::from_str::<String>(&json).unwrap_or(json))
}

impl ser::SerializeMap for Object<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<(), Error> {
        self.name = key_text(key)?;
        Ok(())
    }
    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Error> {
        let name = std::mem::take(&mut self.name);
        value.serialize(self.at.below(&name))
    }
    fn end(self) -> Result<(), Error> {
        Ok(())
    }
}

impl ser::SerializeStruct for Object<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: ?Sized + Serialize>(&mut self, name: &'static str, value: &T) -> Result<(), Error> {
        value.serialize(self.at.below(name))
    }
    fn end(self) -> Result<(), Error> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;
    use std::collections::BTreeMap;

    #[derive(Serialize)]
    struct Record {
        name: &'static str,
        load: [f64; 2],
        flag: Option<bool>,
        nothing: Option<u32>,
        nested: BTreeMap<&'static str, BTreeMap<&'static str, u64>>,
        empty: BTreeMap<String, String>,
        by_cpu: BTreeMap<u32, &'static str>,
    }

    #[test]
    fn nested_maps_are_dotted_strings_bare_and_the_rest_compact_json() {
        let record = Record {
            name: "vm \"one\"",
            load: [1.0, 2.5],
            flag: Some(true),
            nothing: None,
            nested: BTreeMap::from([("v", BTreeMap::from([("x", 1)]))]),
            empty: BTreeMap::new(),
            by_cpu: BTreeMap::from([(3, "performance")]),
        };
        let text = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
        };
        assert_eq!(
            fields(&record),
            text(&[
                ("name", "vm \"one\""),
                ("load", "[1.0,2.5]"),
                ("flag", "true"),
                ("nothing", "null"),
                ("nested.v.x", "1"),
                ("by_cpu.3", "performance"),
            ])
        );
        assert_eq!(fields(&4), text(&[("", "4")]));
    }
}
