//! A parse position in compact log text (whitespace removed; the vLLM and Ray readers also
//! lower-case it): the one reader of numbers, sizes and literals that the PyTorch, vLLM and
//! Ray message parsers share.

const GIB: f64 = 1_073_741_824.0;

pub(super) struct Cursor<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) at: usize,
}

impl Cursor<'_> {
    pub(super) fn eat(&mut self, literal: &str) -> bool {
        let lit = literal.as_bytes();
        if self.bytes.get(self.at..self.at + lit.len()) == Some(lit) {
            self.at += lit.len();
            true
        } else {
            false
        }
    }

    pub(super) fn expect(&mut self, literal: &str) -> Option<()> {
        self.eat(literal).then_some(())
    }

    /// Tries `f`; rewinds when it fails.
    pub(super) fn attempt<T>(&mut self, f: impl FnOnce(&mut Self) -> Option<T>) -> Option<T> {
        let saved = self.at;
        let result = f(self);
        if result.is_none() {
            self.at = saved;
        }
        result
    }

    /// A run of digits (`20` of `20.00MiB`).
    pub(super) fn digits(&mut self) -> Option<u64> {
        let len = self.bytes[self.at..].iter().take_while(|b| b.is_ascii_digit()).count();
        let value = std::str::from_utf8(&self.bytes[self.at..self.at + len]).ok()?.parse().ok()?;
        self.at += len;
        Some(value)
    }

    /// `12`, `0.95`: digits, then a fraction only when a digit follows the point (a
    /// sentence's full stop is not part of the number).
    pub(super) fn number(&mut self) -> Option<f64> {
        let digits = |from: usize| self.bytes[from..].iter().take_while(|b| b.is_ascii_digit()).count();
        let mut len = digits(self.at);
        if len > 0 && self.bytes.get(self.at + len) == Some(&b'.') && digits(self.at + len + 1) > 0 {
            len += 1 + digits(self.at + len + 1);
        }
        let value = std::str::from_utf8(&self.bytes[self.at..self.at + len]).ok()?.parse().ok()?;
        self.at += len;
        Some(value)
    }

    /// A [`Cursor::number`] without a fraction.
    pub(super) fn whole(&mut self) -> Option<u64> {
        let value = self.number()?;
        (value.fract() == 0.0 && (0.0..1e15).contains(&value)).then_some(value as u64)
    }

    /// `20.00MiB`, `0bytes`, `1.50GiB` (PyTorch's sizes).
    pub(super) fn size(&mut self) -> Option<u64> {
        self.attempt(|c| {
            let len = c.bytes[c.at..].iter().take_while(|b| b.is_ascii_digit() || **b == b'.').count();
            let number: f64 = std::str::from_utf8(&c.bytes[c.at..c.at + len]).ok()?.parse().ok()?;
            c.at += len;
            let unit: f64 =
                [("bytes", 1.0), ("KiB", 1024.0), ("MiB", 1048576.0), ("GiB", 1073741824.0), ("TiB", 1099511627776.0)]
                    .into_iter()
                    .find(|(name, _)| c.eat(name))?
                    .1;
            bytes(number, unit)
        })
    }

    /// A number of GiB followed by one of `units` (`12.50gib`, `12.50gb`: vLLM's and Ray's `GB`
    /// are bytes / 1024³ too); with `unit_required` false the unit may be left out (`F/T GiB`
    /// prints it once, after the total).
    pub(super) fn gib(&mut self, units: &[&str], unit_required: bool) -> Option<u64> {
        let value = self.number()?;
        let unit = units.iter().any(|u| self.eat(u));
        (unit || !unit_required).then_some(())?;
        bytes(value, GIB)
    }

    /// Skips to just after the next occurrence of `literal` within `limit` bytes.
    pub(super) fn skip_past(&mut self, literal: &str, limit: usize) -> bool {
        match self.find(literal, limit) {
            Some(p) => {
                self.at = p + literal.len();
                true
            }
            None => false,
        }
    }

    /// Where the next `literal` starts, within `limit` bytes.
    pub(super) fn find(&self, literal: &str, limit: usize) -> Option<usize> {
        let lit = literal.as_bytes();
        let end = (self.at + limit).min(self.bytes.len());
        self.bytes.get(self.at..end)?.windows(lit.len()).position(|w| w == lit).map(|p| self.at + p)
    }

    /// Text up to (not including) the first of `stops`, at most `limit` bytes.
    pub(super) fn until(&mut self, stops: &[u8], limit: usize) -> Option<String> {
        let len = self.bytes[self.at..].iter().take(limit).position(|b| stops.contains(b))?;
        let text = String::from_utf8_lossy(&self.bytes[self.at..self.at + len]).into_owned();
        self.at += len;
        Some(text)
    }
}

fn bytes(value: f64, unit: f64) -> Option<u64> {
    let bytes = (value * unit).round();
    (0.0..1.8e19).contains(&bytes).then_some(bytes as u64)
}
