//! Where a request's time goes: named stages of an object's way through the service,
//! emitted as `TRACE` events of target [`TARGET`] (fields `stage` and `id`). Nothing
//! listens outside `openrail bench pulls`, which records them and prints the time between
//! consecutive stages; when nothing listens, a mark costs one check of the level.

/// The tracing target of stage marks.
pub const TARGET: &str = "openrail::stage";

/// Marks that each of `ids` reached `stage` now.
pub fn mark<'a>(stage: &'static str, ids: impl IntoIterator<Item = &'a str>) {
    if tracing::enabled!(target: TARGET, tracing::Level::TRACE) {
        for id in ids {
            tracing::trace!(target: TARGET, stage, id);
        }
    }
}
