//! What the tests about operation manifests share: the manifests
//! `#[operation]` compiled into each built-in crate.

pub const COMPILED: &[braid_support::OperationInfo] = &[
    op_cid::OPERATION,
    op_collect::OPERATION,
    op_concat::OPERATION,
    op_decode::OPERATION,
    op_encode::OPERATION,
    op_exif::OPERATION,
    op_file::OPERATION,
    op_hamming::OPERATION,
    op_image_decode::OPERATION,
    op_image_gray::OPERATION,
    op_image_phash::OPERATION,
    op_image_pixels::OPERATION,
    op_image_resize::OPERATION,
    op_multihash::OPERATION,
    op_multihash_digest::OPERATION,
    op_photo_proof::OPERATION,
    op_share::OPERATION,
    op_utf8::OPERATION,
];
