#[derive(braid_macros::Value)]
pub struct Pair(u32, u32);

#[derive(braid_macros::Value)]
pub enum Shape {
    Square(u32),
    Circle { radius: u32 },
}

#[derive(braid_macros::Value)]
pub struct Fields<T> {
    pub index: usize,
    pub byte: u8,
    pub keyed: std::collections::BTreeMap<u32, String>,
    pub value: T,
}

#[derive(braid_macros::Value)]
pub struct Clash {
    pub pixel_count: u32,
    pub pixelCount: u32,
}

fn main() {}
