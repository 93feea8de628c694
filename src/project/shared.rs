//! [`Shared`]: an immutable string whose clones share one allocation. A resource's domain,
//! group, version, path and CRD version are mostly the same in every entry of PROJECT; read as
//! `Shared` they are allocated once per distinct value instead of once per resource (at 200 kinds
//! that was a fifth of what `create api` spent reading PROJECT; issue 50).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Shared(Arc<str>);

impl Shared {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether both are one allocation.
    #[cfg(test)]
    pub fn same(&self, other: &Shared) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Default for Shared {
    /// The empty string, shared too: `Resource::default()` allocates nothing for these fields.
    fn default() -> Shared {
        static EMPTY: OnceLock<Shared> = OnceLock::new();
        EMPTY.get_or_init(|| Shared(Arc::from(""))).clone()
    }
}

impl Deref for Shared {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Shared {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Shared {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)
    }
}

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl From<&str> for Shared {
    fn from(s: &str) -> Shared {
        Shared(Arc::from(s))
    }
}

impl From<String> for Shared {
    fn from(s: String) -> Shared {
        Shared(Arc::from(s))
    }
}

impl From<&String> for Shared {
    fn from(s: &String) -> Shared {
        Shared(Arc::from(s.as_str()))
    }
}

impl From<Shared> for String {
    fn from(s: Shared) -> String {
        s.0.to_string()
    }
}

impl PartialEq<str> for Shared {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for Shared {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for Shared {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<Shared> for str {
    fn eq(&self, other: &Shared) -> bool {
        self == &*other.0
    }
}

impl PartialEq<Shared> for &str {
    fn eq(&self, other: &Shared) -> bool {
        *self == &*other.0
    }
}

impl PartialEq<Shared> for String {
    fn eq(&self, other: &Shared) -> bool {
        **self == *other.0
    }
}

impl Serialize for Shared {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Shared {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Shared, D::Error> {
        String::deserialize(d).map(Shared::from)
    }
}

/// `Shared::is_empty` for serde's `skip_serializing_if`.
pub fn is_empty(s: &Shared) -> bool {
    s.0.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_and_compare_as_strings() {
        let a = Shared::from("example.com");
        let b = a.clone();
        assert!(Arc::ptr_eq(&a.0, &b.0));
        assert_eq!(a, "example.com");
        assert_eq!("example.com", a);
        assert_eq!(a, String::from("example.com"));
        assert_eq!(format!("{a}/{b:?}"), "example.com/\"example.com\"");
        assert!(Shared::default().is_empty());
        assert!(Arc::ptr_eq(&Shared::default().0, &Shared::default().0));
        let yaml = serde_yaml::to_string(&a).unwrap();
        assert_eq!(serde_yaml::from_str::<Shared>(&yaml).unwrap(), a);
    }
}
