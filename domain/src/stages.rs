//! Where a request's time goes: named stages of an object's way through the service,
//! emitted as `TRACE` events of target [`TARGET`] (fields `stage` and `id`). Nothing
//! listens outside `openrail bench pulls`, which records them and prints the time between
//! consecutive stages; when nothing listens, a mark costs one check of the level.

/// The tracing target of stage marks.
pub const TARGET: &str = "openrail::stage";

/// Marks that each of `ids` reached `stage` now (`ids` is not iterated unless stage marks
/// are recorded).
pub fn mark<I: AsRef<str>>(stage: &'static str, ids: impl IntoIterator<Item = I>) {
    if tracing::enabled!(target: TARGET, tracing::Level::TRACE) {
        for id in ids {
            tracing::trace!(target: TARGET, stage, id = id.as_ref());
        }
    }
}

/// The tracing target of group-commit timings.
pub const GROUP_TARGET: &str = "openrail::group";

/// Records that the group writer committed `jobs` writes in one transaction that took
/// `spent` (from its first statement to its commit's answer).
pub fn group_written(jobs: usize, spent: std::time::Duration) {
    if tracing::enabled!(target: GROUP_TARGET, tracing::Level::TRACE) {
        let us = |d: std::time::Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        tracing::trace!(
            target: GROUP_TARGET,
            jobs = jobs as u64,
            micros = us(spent)
        );
    }
}
