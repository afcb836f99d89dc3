//! The relayer: watches chain events with a persisted cursor and reconciles the bank-rail legs.
