//! What a failed I/O means to a job: the errno Linux would hand fio for the NVMe status
//! (the kernel's nvme_error_status, then blk_status_to_errno), and fio's continue_on_error /
//! ignore_error rule (td_error.c) for whether the job goes on.

use device::Status;

use crate::fio::options::{Direction, ErrorPolicy, ERROR_READ, ERROR_VERIFY, ERROR_WRITE};

pub const EIO: i32 = 5;
pub const ENOSPC: i32 = 28;
pub const ENODATA: i32 = 61;
pub const EOVERFLOW: i32 = 75;
pub const EILSEQ: i32 = 84;
pub const EOPNOTSUPP: i32 = 95;
pub const ETOOMANYREFS: i32 = 109;
pub const ETIMEDOUT: i32 = 110;
pub const EREMOTEIO: i32 = 121;

/// The errno a read or write of the kernel's NVMe driver returns for `status`.
pub fn errno_of(status: Status) -> i32 {
    match status {
        Status::CAPACITY_EXCEEDED => ENOSPC,
        Status::LBA_OUT_OF_RANGE => EREMOTEIO,
        Status::INVALID_OPCODE | Status::INVALID_FIELD => EOPNOTSUPP,
        Status::UNRECOVERED_READ_ERROR | Status::DEALLOCATED_OR_UNWRITTEN_BLOCK => ENODATA,
        Status::ZONE_TOO_MANY_ACTIVE => EOVERFLOW,
        Status::ZONE_TOO_MANY_OPEN => ETOOMANYREFS,
        _ => EIO,
    }
}

/// strerror's text for the errnos fio can report here.
pub fn strerror(errno: i32) -> &'static str {
    match errno {
        0 => "Success",
        EIO => "Input/output error",
        ENOSPC => "No space left on device",
        ENODATA => "No data available",
        EOVERFLOW => "Value too large for defined data type",
        EILSEQ => "Invalid or incomplete multibyte or wide character",
        EOPNOTSUPP => "Operation not supported",
        ETOOMANYREFS => "Too many references: cannot splice",
        ETIMEDOUT => "Connection timed out",
        EREMOTEIO => "Remote I/O error",
        _ => "Unknown error",
    }
}

/// fio's td_error_type: EILSEQ is a verify error; reads are read errors, the rest write errors.
pub fn error_type(dir: Direction, errno: i32) -> u32 {
    if errno == EILSEQ {
        ERROR_VERIFY
    } else if dir == Direction::Read {
        ERROR_READ
    } else {
        ERROR_WRITE
    }
}

/// fio's td_non_fatal_error: the job goes on when continue_on_error covers the error's type
/// and the errno is in that type's ignore_error list (EIO and EILSEQ when none was given).
pub fn non_fatal(policy: &ErrorPolicy, etype: u32, errno: i32) -> bool {
    if policy.continue_on & etype == 0 {
        return false;
    }
    let bit = etype.trailing_zeros() as usize;
    match policy.ignore.get(bit).and_then(|l| l.as_ref()) {
        Some(list) => list.contains(&errno),
        None => errno == EIO || errno == EILSEQ,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_map_to_linux_errnos() {
        assert_eq!(errno_of(Status::CAPACITY_EXCEEDED), ENOSPC);
        assert_eq!(errno_of(Status::ZONE_FULL), EIO);
        assert_eq!(errno_of(Status::ZONE_TOO_MANY_OPEN), ETOOMANYREFS);
        assert_eq!(errno_of(Status::ZONE_TOO_MANY_ACTIVE), EOVERFLOW);
        assert_eq!(strerror(ENOSPC), "No space left on device");
    }

    #[test]
    fn fio_non_fatal_rule() {
        let mut p = ErrorPolicy::default();
        assert!(!non_fatal(&p, ERROR_WRITE, EIO), "continue_on_error=none");
        p.continue_on = ERROR_WRITE;
        assert!(
            non_fatal(&p, ERROR_WRITE, EIO),
            "EIO is non-fatal by default"
        );
        assert!(!non_fatal(&p, ERROR_WRITE, ENOSPC));
        assert!(!non_fatal(&p, ERROR_READ, EIO), "reads not covered");
        p.ignore[1] = Some(vec![ENOSPC]);
        assert!(non_fatal(&p, ERROR_WRITE, ENOSPC));
        assert!(
            !non_fatal(&p, ERROR_WRITE, EIO),
            "the list replaces the default"
        );
    }
}
