//! Plan builder (in progress).
use super::{Format, Reader};
use crate::plan::{Framework, Plan};

pub fn plan(_f: Format, _r: &Reader) -> Plan {
    Plan::new(Framework::Trl)
}
