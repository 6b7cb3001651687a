//! Live host collection. Collectors write snapshot fields and never judge.

pub mod refresh;
