//! The store's timestamps: RFC 3339 in UTC with milliseconds and `Z`
//! ("2026-11-23T22:24:26.879Z"). Records keep them as that text, so runs from every
//! schedlab version compare and sort as strings; they are made only here.

use time::format_description::FormatItem;
use time::macros::format_description;
use time::OffsetDateTime;

/// Fixed width, so the text sorts in time order.
const FORMAT: &[FormatItem<'static>] =
    format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");

/// Now, as the store writes it.
pub fn now_utc() -> String {
    format(OffsetDateTime::now_utc())
}

fn format(at: OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    // Only a year outside 0..=9999 fails to format; no clock reads that.
    at.format(FORMAT).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_is_the_stored_one() {
        // The golden fixture's start, as the hand-written formatter stored it.
        let at = OffsetDateTime::from_unix_timestamp_nanos(1_795_472_666_879_999_999).unwrap();
        assert_eq!(format(at), "2026-11-23T22:24:26.879Z");
        let offset = time::UtcOffset::from_hms(2, 0, 0).unwrap();
        assert_eq!(format(at.to_offset(offset)), "2026-11-23T22:24:26.879Z", "always UTC");
        let early = OffsetDateTime::from_unix_timestamp(0).unwrap();
        assert_eq!(format(early), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn now_has_the_stored_shape() {
        let t = now_utc();
        assert_eq!(t.len(), 24, "{t}");
        assert!(t.starts_with("20") && t.ends_with('Z') && &t[10..11] == "T", "{t}");
    }
}
