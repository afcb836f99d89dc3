//! How the operator's transactions in flight will pack into blocks, predicted from the
//! node's rule, so that the batch which would straddle two blocks is cut to close the
//! first one (sans-IO; the submitter's sender feeds it).
//!
//! A node builds a block from one sender's transactions in nonce order and admits the next
//! while the gas used so far plus its *limit* fits the block's gas; the first that does not
//! fit waits for the next block with every later nonce behind it. With batches of one size
//! a block therefore ends with between `G − L` and `G − L + u` gas used (`L` a batch's
//! limit, `u` its use): measured at 1 s blocks of 30M gas, 95–96 % of the pulls its gas
//! could settle. A sender that knows what it has in flight knows where that cut falls,
//! and can send the batch there smaller, sized to the gas left: the block then ends within
//! the closing batch's own margin of full.
//!
//! The prediction is only as good as its inputs: the gas others use (the submitter takes
//! what they used in the last block it read) and each transaction's use (the trial
//! execution's, corrected for the access list it ran with). When it is wrong the closing
//! batch is one smaller batch in the middle of a block: one transaction's overhead (~50,000
//! gas) and no delay — it is sent at once like any other.

use std::collections::VecDeque;

/// One transaction in flight, as the packing sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct InFlight {
    /// Its nonce.
    pub nonce: u64,
    /// The gas it is expected to use (its limit when not known).
    pub used: u64,
    /// Its gas limit.
    pub limit: u64,
}

/// The operator's transactions sent and not yet known to be mined, in nonce order.
#[derive(Debug, Default)]
pub(crate) struct Packing {
    in_flight: VecDeque<InFlight>,
}

impl Packing {
    /// A transaction was sent (its nonce above every one before it).
    pub fn sent(&mut self, tx: InFlight) {
        // A nonce signed again after an outside transaction took it is a new, higher one;
        // a lower one would be a replacement of a nonce already here, which keeps its
        // limit: nothing to add.
        if self
            .in_flight
            .back()
            .is_some_and(|last| last.nonce >= tx.nonce)
        {
            return;
        }
        self.in_flight.push_back(tx);
    }

    /// Every nonce below `next` is mined (or otherwise taken).
    pub fn mined_below(&mut self, next: u64) {
        while self.in_flight.front().is_some_and(|t| t.nonce < next) {
            self.in_flight.pop_front();
        }
    }

    /// The transactions in flight.
    pub fn len(&self) -> usize {
        self.in_flight.len()
    }

    /// The gas left in the last block the transactions in flight will fill, on blocks of
    /// `block_gas` gas (what others leave of it), by the node's rule: a transaction joins
    /// the block while the gas used so far plus its limit fits, else it starts the next.
    /// The whole block when nothing is in flight.
    pub fn room(&self, block_gas: u64) -> u64 {
        let mut used = 0u64;
        for tx in &self.in_flight {
            if used.saturating_add(tx.limit) > block_gas && used > 0 {
                used = 0;
            }
            used = used.saturating_add(tx.used);
        }
        block_gas.saturating_sub(used)
    }
}

/// How many of `items` to put in the next batch: all of them when a batch of that size
/// fits `room` (the gas left in the block it will join, less `margin`), or when even a
/// batch of `fewest` does not — then it starts the next block; otherwise the most that fit,
/// so that the batch closes the block. `limit_of(n)` is the limit a batch of `n` items will
/// be sent with (non-decreasing in `n`).
pub(crate) fn closing_size(
    items: usize,
    room: u64,
    margin: u64,
    fewest: usize,
    limit_of: impl Fn(usize) -> u64,
) -> usize {
    let fits = |n: usize| limit_of(n).saturating_add(margin) <= room;
    if items <= fewest || fits(items) || !fits(fewest) {
        return items;
    }
    // The largest n in [fewest, items) that fits: fits(fewest) holds, fits(items) does not.
    let (mut lo, mut hi) = (fewest, items);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The node's rule, written as a node builds blocks: which block (0, 1, …) each
    /// transaction lands in.
    fn blocks_of(txs: &[InFlight], block_gas: u64) -> Vec<usize> {
        let (mut block, mut used) = (0, 0u64);
        txs.iter()
            .map(|t| {
                if used + t.limit > block_gas && used > 0 {
                    block += 1;
                    used = 0;
                }
                used += t.used;
                block
            })
            .collect()
    }

    fn packing(txs: &[InFlight]) -> Packing {
        let mut p = Packing::default();
        for t in txs {
            p.sent(*t);
        }
        p
    }

    fn tx(nonce: u64, used: u64, limit: u64) -> InFlight {
        InFlight { nonce, used, limit }
    }

    #[test]
    fn the_room_is_what_the_last_block_leaves() {
        // Blocks of 100: 40 (limit 50) and 40 (limit 50) fit (40 + 50 ≤ 100); a third (limit
        // 50) does not (80 + 50 > 100) and starts the next block.
        let p = packing(&[tx(0, 40, 50), tx(1, 40, 50), tx(2, 40, 50)]);
        assert_eq!(p.room(100), 60);
        assert_eq!(packing(&[]).room(100), 100);
        assert_eq!(packing(&[tx(0, 40, 50), tx(1, 40, 50)]).room(100), 20);
    }

    #[test]
    fn mined_nonces_leave_the_packing() {
        let mut p = packing(&[tx(0, 40, 50), tx(1, 40, 50), tx(2, 40, 50)]);
        p.mined_below(2);
        assert_eq!(p.len(), 1);
        assert_eq!(p.room(100), 60);
        // A replacement of a nonce in flight adds nothing; a later nonce does.
        p.sent(tx(2, 10, 10));
        assert_eq!(p.len(), 1);
        p.sent(tx(5, 10, 20));
        assert_eq!(p.room(100), 50);
    }

    #[test]
    fn the_batch_that_would_straddle_two_blocks_is_cut_to_close_the_first() {
        // A batch of n items: limit 10 n + 5.
        let limit = |n: usize| 10 * n as u64 + 5;
        // 100 items do not fit 500 (1,005); 49 do (495), 50 do not (505).
        assert_eq!(closing_size(100, 500, 0, 4, limit), 49);
        // With a margin of 20, 47 (475 + 20 ≤ 500).
        assert_eq!(closing_size(100, 500, 20, 4, limit), 47);
        // All of them fit: all of them.
        assert_eq!(closing_size(40, 500, 0, 4, limit), 40);
        // Not even the fewest fit: the whole batch, which starts the next block.
        assert_eq!(closing_size(100, 40, 0, 4, limit), 100);
        // No more than the fewest queued: as they are.
        assert_eq!(closing_size(3, 20, 0, 4, limit), 3);
    }

    proptest! {
        /// The room is exactly what the node's rule leaves of the block the last
        /// transaction lands in, and a next transaction whose limit fits it joins that
        /// block while one that does not starts the next.
        #[test]
        fn the_room_follows_the_node_s_rule(
            sizes in prop::collection::vec((1u64..4_000, 0u64..2_000), 0..40),
            next in (1u64..4_000, 0u64..2_000),
        ) {
            let block_gas = 10_000;
            let mut txs: Vec<InFlight> = sizes
                .iter()
                .enumerate()
                .map(|(i, (used, extra))| tx(i as u64, *used, (used + extra).min(block_gas)))
                .collect();
            let room = packing(&txs).room(block_gas);
            let last = blocks_of(&txs, block_gas).last().copied().unwrap_or(0);
            let candidate = tx(txs.len() as u64, next.0, (next.0 + next.1).min(block_gas));
            txs.push(candidate);
            let with = blocks_of(&txs, block_gas);
            let joined = with[with.len() - 1] == last;
            // An empty packing puts the first transaction in block 0 whatever its size.
            prop_assert_eq!(joined, candidate.limit <= room || txs.len() == 1);
        }

        /// The closing size is the largest that fits when the whole does not, never fewer
        /// than the fewest, never more than the items.
        #[test]
        fn the_closing_size_is_the_largest_that_fits(
            items in 1usize..600,
            room in 0u64..20_000,
            margin in 0u64..500,
            per in 1u64..100,
            fixed in 0u64..500,
            fewest in 1usize..20,
        ) {
            let limit = |n: usize| per * n as u64 + fixed;
            let fits = |n: usize| limit(n) + margin <= room;
            let n = closing_size(items, room, margin, fewest, limit);
            prop_assert!(n <= items);
            if items <= fewest || fits(items) || !fits(fewest) {
                prop_assert_eq!(n, items);
            } else {
                prop_assert!(n >= fewest && fits(n) && !fits(n + 1));
            }
        }
    }
}
