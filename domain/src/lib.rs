//! The domain of Openrail without I/O: money and currencies (`money`), intervals and their
//! calendar epochs (`epoch`), and the lifecycle of each object with the transitions it
//! allows, as data (`status`). Every other crate builds on these; nothing here reads a
//! database, a chain or the network, so all of it is unit- and property-tested in place.

#[doc(hidden)]
pub use serde as __serde;

/// An enum stored and shown by name: `ALL`, `as_str`, `parse`, and serde by that name.
#[macro_export]
macro_rules! string_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $($(#[$vm])* $variant),+ }
        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// The stored and API name.
            pub fn as_str(self) -> &'static str { match self { $($name::$variant => $text),+ } }
            /// Parses the stored name.
            pub fn parse(s: &str) -> Option<Self> { match s { $($text => Some($name::$variant),)+ _ => None } }
        }
        impl $crate::__serde::Serialize for $name {
            fn serialize<S: $crate::__serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> { s.serialize_str(self.as_str()) }
        }
        impl<'de> $crate::__serde::Deserialize<'de> for $name {
            fn deserialize<D: $crate::__serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str> as $crate::__serde::Deserialize>::deserialize(d)?;
                Self::parse(&s).ok_or_else(|| $crate::__serde::de::Error::custom(format!("unknown {} {s:?}", stringify!($name))))
            }
        }
    };
}

pub mod crash;
pub mod epoch;
pub mod ids;
pub mod journal;
pub mod money;
pub mod pulls;
pub mod stages;
pub mod status;

pub use epoch::{Epoch, Interval};
pub use money::{Amount, AmountError, Currency};
