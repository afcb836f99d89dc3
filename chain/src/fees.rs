//! Fee arithmetic of replacing a transaction (sans-IO).
//!
//! A node accepts a transaction that takes the place of a pending one with the same nonce
//! only when it pays more. geth (`core/txpool/legacypool/list.go`, `priceBump` 10) and
//! reth (`price_bump` 10) both require *each* of the maximum fee and the priority fee to
//! be strictly higher than the pending one's and at least 110 % of it, rounded down; the
//! strictness matters for fees of a few wei, where 10 % rounds to nothing. [`bump`] gives
//! the smallest fees that pass that rule (and never less than what the market asks now);
//! [`accepted_by_geth`] is the rule itself, the oracle of the property test below.

/// The two fees of an EIP-1559 transaction, in wei per gas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fees {
    /// `maxFeePerGas`.
    pub max_fee: u128,
    /// `maxPriorityFeePerGas` (never above `max_fee`).
    pub tip: u128,
}

/// The price bump, in percent, that geth and reth require of a replacement.
pub const PRICE_BUMP_PERCENT: u128 = 10;

/// The smallest fee that a node accepts in place of `old`: above it by at least 10 % and at
/// least one wei.
pub fn raised(old: u128) -> u128 {
    // floor(old * 110 / 100) = old + floor(old / 10), without overflow; at least old + 1.
    old.saturating_add((old / 10).max(1))
}

/// The fees of a replacement for a transaction paying `old`, when the market asks `market`
/// now: each fee raised by the bump rule, or the market's when that is higher; `None` when
/// the maximum fee would pass `cap` (the caller cancels instead).
pub fn bump(old: Fees, market: Fees, cap: Option<u128>) -> Option<Fees> {
    let tip = raised(old.tip).max(market.tip);
    let max_fee = raised(old.max_fee).max(market.max_fee).max(tip);
    match cap {
        Some(cap) if max_fee > cap => None,
        _ => Some(Fees { max_fee, tip }),
    }
}

/// The fees of a zero-value self-send that takes the nonce of a transaction paying `old`
/// (a cancellation): the bump rule with nothing else asked; it may pass the cap by one
/// bump, which a 21,000-gas transaction costs little.
pub fn cancel(old: Fees, market: Fees) -> Fees {
    bump(old, market, None).expect("no cap")
}

/// Whether geth's pool takes a transaction paying `new` in place of one paying `old`
/// (`list.go`, `Add`): both fees strictly higher and each at least
/// `old * (100 + bump) / 100`, rounded down.
pub fn accepted_by_geth(old: Fees, new: Fees) -> bool {
    let threshold = |x: u128| x.saturating_mul(100 + PRICE_BUMP_PERCENT) / 100;
    new.max_fee > old.max_fee
        && new.tip > old.tip
        && new.max_fee >= threshold(old.max_fee)
        && new.tip >= threshold(old.tip)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fees() -> impl Strategy<Value = Fees> {
        // Down to the wei, up to far above any real fee (but clear of saturation).
        prop_oneof![
            0u128..64,
            0u128..1_000_000_000_000u128,
            0u128..(u128::MAX / 1000)
        ]
        .prop_flat_map(|max_fee| (Just(max_fee), 0..=max_fee))
        .prop_map(|(max_fee, tip)| Fees { max_fee, tip })
    }

    proptest! {
        /// Every replacement the submitter signs is one geth accepts, whatever the old fees
        /// (down to zero and single wei) and the market's.
        #[test]
        fn bumped_fees_are_accepted(old in fees(), market in fees()) {
            let new = bump(old, market, None).unwrap();
            prop_assert!(accepted_by_geth(old, new), "{old:?} -> {new:?}");
            prop_assert!(new.tip <= new.max_fee);
            prop_assert!(new.max_fee >= market.max_fee && new.tip >= market.tip);
        }

        /// And it pays no more than needed: with the market asking nothing more, one wei
        /// less on either fee is refused.
        #[test]
        fn the_raise_is_the_least_accepted(old in fees()) {
            let zero = Fees { max_fee: 0, tip: 0 };
            let new = bump(old, zero, None).unwrap();
            if new.max_fee == raised(old.max_fee) {
                let less = Fees { max_fee: new.max_fee - 1, tip: new.tip.min(new.max_fee - 1) };
                prop_assert!(!accepted_by_geth(old, less), "{old:?} -> {less:?}");
            }
            let less = Fees { tip: new.tip - 1, ..new };
            prop_assert!(!accepted_by_geth(old, less), "{old:?} -> {less:?}");
        }

        /// A cap is never passed: past it the answer is to cancel.
        #[test]
        fn the_cap_holds(old in fees(), market in fees(), cap in 0u128..1_000_000_000_000u128) {
            match bump(old, market, Some(cap)) {
                Some(new) => prop_assert!(new.max_fee <= cap),
                None => prop_assert!(raised(old.max_fee).max(market.max_fee).max(raised(old.tip).max(market.tip)) > cap),
            }
        }
    }

    #[test]
    fn single_wei_fees_rise_by_one() {
        let old = Fees { max_fee: 1, tip: 0 };
        let new = bump(old, Fees { max_fee: 0, tip: 0 }, None).unwrap();
        assert_eq!(new, Fees { max_fee: 2, tip: 1 });
        assert!(accepted_by_geth(old, new));
        // 10 % of 9 wei rounds down to nothing; strictly higher is still required.
        assert!(!accepted_by_geth(
            Fees { max_fee: 9, tip: 9 },
            Fees { max_fee: 9, tip: 9 }
        ));
        assert_eq!(raised(9), 10);
        assert_eq!(raised(100), 110);
        assert_eq!(raised(101), 111);
    }
}
