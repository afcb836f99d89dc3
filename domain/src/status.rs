//! What every object's lifecycle is: a status enum with the transitions it allows as data,
//! for every status the statuses it may be reached from ([`Lifecycle::sources`]). Each
//! object declares its own in its module (`MandateStatus` in `mandate`, …) and makes it a
//! [`Lifecycle`] with `lifecycle!`, which also tests its shape: nothing is reached from
//! itself, every status is reachable from a first one, and at least one status is final.
//! The store changes a status only along these (a conditional `UPDATE … WHERE status IN
//! (sources)`, or a check before it).

/// A status enum with its transition table.
pub trait Lifecycle: Copy + Eq + std::fmt::Debug + 'static {
    /// Every status, in declaration order.
    fn all() -> &'static [Self];
    /// The statuses `self` may be reached from (none: only a new object has it).
    fn sources(self) -> &'static [Self];
    /// Whether an object may move from `from` to `self`.
    fn reachable_from(self, from: Self) -> bool {
        self.sources().contains(&from)
    }
    /// Whether nothing may follow it.
    fn is_final(self) -> bool {
        !Self::all().iter().any(|s| s.sources().contains(&self))
    }
}

/// Makes a status enum (a `string_enum!` with `sources()`) a [`Lifecycle`] and tests its
/// shape. Each object calls it once per lifecycle in its own module, with the statuses a
/// new object may have: `lifecycle!(MandateStatus, starts: [RequiresAuthorization,
/// Pending]);`. The test is named after the enum (`mandate::MandateStatus`) and runs
/// `assert_well_formed` from those first statuses.
macro_rules! lifecycle {
    ($name:ident, starts: [$($first:ident),+ $(,)?]) => {
        impl $crate::status::Lifecycle for $name {
            fn all() -> &'static [Self] {
                $name::ALL
            }
            fn sources(self) -> &'static [Self] {
                $name::sources(self)
            }
        }

        /// The lifecycle has the shape every lifecycle must have, from its first statuses.
        #[cfg(test)]
        #[test]
        #[allow(non_snake_case)]
        fn $name() {
            $crate::status::assert_well_formed(&[$($name::$first),+]);
        }
    };
}
pub(crate) use lifecycle;

/// The shape every table must have: no status reached from itself; every status
/// reachable from one that nothing leads to (where objects start) — or, for a pull,
/// from `pending`, where every pull starts; at least one final status.
#[cfg(test)]
pub(crate) fn assert_well_formed<S: Lifecycle>(first: &[S]) {
    for s in S::all() {
        assert!(!s.sources().contains(s), "{s:?} from itself");
    }
    let mut reached: Vec<S> = first.to_vec();
    loop {
        let before = reached.len();
        for s in S::all() {
            if !reached.contains(s) && s.sources().iter().any(|f| reached.contains(f)) {
                reached.push(*s);
            }
        }
        if reached.len() == before {
            break;
        }
    }
    assert_eq!(reached.len(), S::all().len(), "unreachable: {:?}", S::all());
    assert!(
        S::all().iter().any(|s| s.is_final()),
        "{:?} has no end",
        S::all()
    );
}
