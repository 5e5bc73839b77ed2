//! Plan builder (in progress).
use super::Reader;
use crate::plan::{Framework, Plan};

pub fn plan(_r: &Reader) -> Plan {
    Plan::new(Framework::Llamafactory)
}
