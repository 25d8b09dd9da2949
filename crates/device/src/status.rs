//! NVMe completion status: status code type and status code, with the spec's names.

use std::fmt;

/// An NVMe completion status. Success is `Status::SUCCESS`; every failure names itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Status {
    /// Status Code Type: 0 generic, 1 command specific, 2 media and data integrity.
    pub sct: u8,
    /// Status Code.
    pub sc: u8,
}

macro_rules! statuses {
    ($( $name:ident = ($sct:expr, $sc:expr), $text:expr; )*) => {
        impl Status {
            $( pub const $name: Status = Status { sct: $sct, sc: $sc }; )*

            /// The spec name in Linux's style, for example `ZONE_INVALID_WRITE`.
            pub fn name(self) -> &'static str {
                match (self.sct, self.sc) {
                    $( ($sct, $sc) => stringify!($name), )*
                    _ => "UNKNOWN_STATUS",
                }
            }

            /// One line of what it means.
            pub fn description(self) -> &'static str {
                match (self.sct, self.sc) {
                    $( ($sct, $sc) => $text, )*
                    _ => "unknown status",
                }
            }
        }
    };
}

statuses! {
    SUCCESS = (0, 0x00), "successful completion";
    INVALID_OPCODE = (0, 0x01), "the opcode is not supported by this device design";
    INVALID_FIELD = (0, 0x02), "a field of the command is invalid";
    INTERNAL_ERROR = (0, 0x06), "the device failed internally (backing storage I/O error)";
    NAMESPACE_WRITE_PROTECTED = (0, 0x20), "the namespace is write protected (its image is open read-only)";
    LBA_OUT_OF_RANGE = (0, 0x80), "the LBA range goes past the end of the namespace";
    CAPACITY_EXCEEDED = (0, 0x81), "the namespace capacity is exceeded";
    COMMAND_SIZE_LIMIT_EXCEEDED = (1, 0x83), "the command exceeds a size limit";
    INVALID_ZONE_OPERATION = (1, 0xb6), "invalid zone operation request";
    ZONE_BOUNDARY_ERROR = (1, 0xb8), "the access crosses a zone boundary or the zone capacity";
    ZONE_FULL = (1, 0xb9), "the zone is full";
    ZONE_READ_ONLY = (1, 0xba), "the zone is read only";
    ZONE_OFFLINE = (1, 0xbb), "the zone is offline";
    ZONE_INVALID_WRITE = (1, 0xbc), "the write is not at the zone's write pointer";
    ZONE_TOO_MANY_ACTIVE = (1, 0xbd), "the active zone limit is reached";
    ZONE_TOO_MANY_OPEN = (1, 0xbe), "the open zone limit is reached";
    ZONE_INVALID_TRANSITION = (1, 0xbf), "the zone state transition is not allowed";
    UNRECOVERED_READ_ERROR = (2, 0x81), "the media could not return the data";
    DEALLOCATED_OR_UNWRITTEN_BLOCK = (2, 0x87), "the block is deallocated or was never written (DULBE is on)";
}

impl Status {
    pub fn is_success(self) -> bool {
        self == Status::SUCCESS
    }
    /// The 11-bit value Linux prints (`sct << 8 | sc`).
    pub fn code(self) -> u16 {
        (self.sct as u16) << 8 | self.sc as u16
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({:#04x})", self.name(), self.sc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_codes() {
        assert_eq!(
            Status::ZONE_INVALID_WRITE.to_string(),
            "ZONE_INVALID_WRITE (0xbc)"
        );
        assert_eq!(Status::ZONE_BOUNDARY_ERROR.code(), 0x1b8);
        assert_eq!(Status::LBA_OUT_OF_RANGE.name(), "LBA_OUT_OF_RANGE");
        assert_eq!(Status { sct: 7, sc: 7 }.name(), "UNKNOWN_STATUS");
    }
}
