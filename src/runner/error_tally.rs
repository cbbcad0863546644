//! I/O errors a job tolerates (`continue_on_error`): counted, the first one kept.

use serde::{Deserialize, Serialize};

/// Every failed I/O of a worker that tolerates errors (fio's `total_err`, `first_error`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ErrorTally {
    pub count: u64,
    /// errno of the first failure, 0 when none.
    pub first_errno: i32,
}

impl ErrorTally {
    pub(crate) fn add(&mut self, errno: i32) {
        if self.count == 0 {
            self.first_errno = errno;
        }
        self.count += 1;
    }

    /// Workers in order: the first worker's first error comes first.
    pub(crate) fn merge(&mut self, other: &ErrorTally) {
        if self.count == 0 {
            self.first_errno = other.first_errno;
        }
        self.count += other.count;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_all_and_keeps_the_first() {
        let mut a = ErrorTally::default();
        a.add(28);
        a.add(5);
        assert_eq!(
            a,
            ErrorTally {
                count: 2,
                first_errno: 28
            }
        );
        let mut merged = ErrorTally::default();
        merged.merge(&ErrorTally::default());
        merged.merge(&a);
        assert_eq!(
            merged,
            ErrorTally {
                count: 2,
                first_errno: 28
            }
        );
    }
}
