//! Status codes as `&'static str` label values, without allocating.

/// The lowest status code recorded as `http.response.status_code`.
pub(crate) const MIN_STATUS: u16 = 100;
/// The highest status code recorded as `http.response.status_code`.
pub(crate) const MAX_STATUS: u16 = 599;

const COUNT: usize = (MAX_STATUS - MIN_STATUS + 1) as usize;

const fn digits() -> [[u8; 3]; COUNT] {
    let mut table = [[0u8; 3]; COUNT];
    let mut i = 0;
    while i < COUNT {
        let code = i + MIN_STATUS as usize;
        table[i] = [
            b'0' + (code / 100) as u8,
            b'0' + (code / 10 % 10) as u8,
            b'0' + (code % 10) as u8,
        ];
        i += 1;
    }
    table
}

static DIGITS: [[u8; 3]; COUNT] = digits();

/// `code` as a three-digit `&'static str`, for codes 100 to 599; `None` otherwise.
pub(crate) fn status_code_str(code: u16) -> Option<&'static str> {
    let index = usize::from(code.checked_sub(MIN_STATUS)?);
    std::str::from_utf8(DIGITS.get(index)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_in_range_renders_as_itself() {
        for code in 0..=1000u16 {
            let expected = (MIN_STATUS..=MAX_STATUS)
                .contains(&code)
                .then(|| code.to_string());
            assert_eq!(status_code_str(code).map(str::to_string), expected);
        }
    }
}
