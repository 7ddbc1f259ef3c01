use std::collections::BTreeMap;

use braid_support::{codec, Cid, Multihash, Value};

#[derive(Clone, Debug, PartialEq, braid_macros::Value)]
pub enum Filter {
    Nearest,
    CatmullRom,
}

#[derive(Clone, Debug, PartialEq, braid_macros::Value)]
pub struct Image {
    pub width: u32,
    pub height: u32,
    pub pixels: Vec<u8>,
    pub filter: Filter,
    pub file_cid: Option<Cid>,
    pub hashes: Vec<Multihash>,
    pub tags: BTreeMap<String, String>,
    pub scale: f64,
    pub r#type: u64,
}

fn main() {
    let image = Image {
        width: 2,
        height: 1,
        pixels: vec![1, 2, 3, 4, 5, 6, 7, 8],
        filter: Filter::CatmullRom,
        file_cid: Some(Cid::from_text("bafkqaaa".into()).unwrap()),
        hashes: vec![Multihash::wrap(0x12, &[7; 32]).unwrap()],
        tags: BTreeMap::from([("Make".to_string(), "Braid".to_string())]),
        scale: 0.5,
        r#type: u64::MAX,
    };
    // Suspend and resume: the codec round-trips the value exactly.
    let bytes = codec::encode(&image).unwrap();
    assert_eq!(codec::decode::<Image>(&bytes).unwrap(), image);
    // Truncated or out-of-range data is an error, not a panic.
    assert!(codec::decode::<Image>(&bytes[..bytes.len() - 1]).is_err());
    let bad = codec::decode::<Filter>(&codec::encode(&7u32).unwrap()).unwrap_err();
    assert!(bad.to_string().contains("decode"), "{bad}");
    assert_eq!(codec::decode::<Filter>(&codec::encode(&1u32).unwrap()).unwrap(), Filter::CatmullRom);

    assert_eq!(Image::NAME, "Image");
    assert_eq!(
        Image::TYPESCRIPT,
        "export interface Image {\n  width: number;\n  height: number;\n  pixels: Uint8Array;\n  filter: Filter;\n  \
         fileCid?: string;\n  hashes: Array<Uint8Array>;\n  tags: Record<string, string>;\n  scale: number;\n  \
         type: bigint;\n}"
    );
    assert_eq!(Filter::TYPESCRIPT, "export type Filter = \"nearest\" | \"catmullRom\";");
}
