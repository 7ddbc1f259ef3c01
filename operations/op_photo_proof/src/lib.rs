//! `op_photo_proof`: `(Cid, Cid, String, op_image_decode::Image) ->
//! op_photo_proof::PhotoProof`, the proof-of-existence statement of a photo
//! made of what the workflow computed: the content id of its file, the
//! content id of its decoded pixels, its perceptual hash and its size
//! (read from the image, which the statement does not copy).
#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

use alloc::string::String;

use braid_support::{Cid, Config, Error};

/// A photo's proof of existence. In JS: `{ fileCid, pixelsCid, blockhash,
/// width, height }`.
#[derive(Clone, Debug, PartialEq, Eq, braid_macros::Value)]
pub struct PhotoProof {
    /// The CID of the file's bytes.
    pub file_cid: Cid,
    /// The CID of the decoded RGBA8 pixels.
    pub pixels_cid: Cid,
    /// The perceptual hash, in hex.
    pub blockhash: String,
    pub width: u32,
    pub height: u32,
}

/// Puts the statement together.
#[braid_macros::operation(groups = ["IMAGE"])]
pub async fn execute(
    file_cid: &Cid,
    pixels_cid: &Cid,
    blockhash: &str,
    image: &op_image_decode::Image,
    config: &Config,
) -> Result<PhotoProof, Error> {
    let _ = config;
    Ok(PhotoProof {
        file_cid: file_cid.clone(),
        pixels_cid: pixels_cid.clone(),
        blockhash: blockhash.into(),
        width: image.width,
        height: image.height,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn takes_the_size_from_the_image() {
        let image = op_image_decode::Image { width: 2, height: 1, pixels: vec![0; 8] };
        let (a, b) = (Cid::from_text("bafkqaaa".into()).unwrap(), Cid::from_text("bafkqaab".into()).unwrap());
        let proof = execute_sync(&a, &b, "00ff", &image, &Config::new()).unwrap();
        assert_eq!(proof, PhotoProof { file_cid: a, pixels_cid: b, blockhash: "00ff".into(), width: 2, height: 1 });
    }
}
