//! Known answers: the tags of `workflows/samples/images/exif.jpg` (written
//! by piexifjs) as exifreader reads them (`exif.jpg.tags.json`, by
//! `js/lib/images.mjs`); a photo without EXIF is an empty map; a damaged
//! file is an error.

use std::collections::BTreeMap;

use op_exif::{config, execute_sync};

fn sample(name: &str) -> Vec<u8> {
    let path = format!("{}/../../workflows/samples/images/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn tags_equal_exifreaders() {
    let found = execute_sync(&sample("exif.jpg"), &config([]).unwrap()).unwrap().tags;
    let expected: BTreeMap<String, String> = serde_json::from_slice(&sample("exif.jpg.tags.json")).unwrap();
    // exifreader names tag 0x8827 as EXIF 2.2 did; kamadak-exif as 2.3 does.
    let expected: BTreeMap<String, String> = expected
        .into_iter()
        .map(|(k, v)| (if k == "ISOSpeedRatings" { "PhotographicSensitivity".to_string() } else { k }, v))
        .collect();
    assert_eq!(found, expected);
}

#[test]
fn no_exif_is_an_empty_map_and_a_damaged_file_an_error() {
    let none = execute_sync(&sample("photo.jpg"), &config([]).unwrap()).unwrap();
    assert!(none.tags.is_empty(), "{none:?}");
    let png = execute_sync(&sample("photo.png"), &config([]).unwrap()).unwrap();
    assert!(png.tags.is_empty());
    let e = execute_sync(&b"not a photo".to_vec(), &config([]).unwrap()).unwrap_err().to_string();
    assert!(e.contains("op_exif") && e.contains("cannot read its EXIF"), "{e}");
    let file = sample("exif.jpg");
    // The EXIF segment cut short: an error, not a panic.
    let e = execute_sync(&file[..60].to_vec(), &config([]).unwrap());
    assert!(e.is_err(), "{e:?}");
}
