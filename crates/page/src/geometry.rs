//! Rectangles and a coarse grid for hit-testing by paint order.

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Rect {
    pub fn new(x: f64, y: f64, w: f64, h: f64) -> Rect {
        Rect { x, y, w, h }
    }
    pub fn from_slice(v: &[f64]) -> Rect {
        match v {
            [x, y, w, h, ..] => Rect::new(*x, *y, *w, *h),
            _ => Rect::default(),
        }
    }
    pub fn right(&self) -> f64 {
        self.x + self.w
    }
    pub fn bottom(&self) -> f64 {
        self.y + self.h
    }
    /// At least a pixel-fraction of area.
    pub fn is_empty(&self) -> bool {
        self.w < 0.5 || self.h < 0.5
    }
    pub fn intersect(&self, o: &Rect) -> Rect {
        let x = self.x.max(o.x);
        let y = self.y.max(o.y);
        let r = self.right().min(o.right());
        let b = self.bottom().min(o.bottom());
        Rect::new(x, y, (r - x).max(0.0), (b - y).max(0.0))
    }
    pub fn union(&self, o: &Rect) -> Rect {
        if self.is_empty() {
            return *o;
        }
        if o.is_empty() {
            return *self;
        }
        let x = self.x.min(o.x);
        let y = self.y.min(o.y);
        Rect::new(x, y, self.right().max(o.right()) - x, self.bottom().max(o.bottom()) - y)
    }
    pub fn contains(&self, px: f64, py: f64) -> bool {
        px >= self.x && px < self.right() && py >= self.y && py < self.bottom()
    }
    pub fn offset(&self, dx: f64, dy: f64) -> Rect {
        Rect::new(self.x + dx, self.y + dy, self.w, self.h)
    }
    pub fn center(&self) -> (f64, f64) {
        (self.x + self.w / 2.0, self.y + self.h / 2.0)
    }
}

/// Buckets rectangles into square cells so a point query looks at few of them.
#[derive(Clone)]
pub struct Grid {
    area: Rect,
    cell: f64,
    cols: usize,
    rows: usize,
    cells: Vec<Vec<u32>>,
}

impl Grid {
    pub fn new(area: Rect, cell: f64) -> Grid {
        let cols = ((area.w / cell).ceil() as usize).clamp(1, 512);
        let rows = ((area.h / cell).ceil() as usize).clamp(1, 512);
        Grid { area, cell, cols, rows, cells: vec![Vec::new(); cols * rows] }
    }

    pub fn insert(&mut self, r: &Rect, id: u32) {
        let r = r.intersect(&self.area);
        if r.is_empty() {
            return;
        }
        let c0 = (((r.x - self.area.x) / self.cell) as usize).min(self.cols - 1);
        let c1 = (((r.right() - self.area.x) / self.cell) as usize).min(self.cols - 1);
        let r0 = (((r.y - self.area.y) / self.cell) as usize).min(self.rows - 1);
        let r1 = (((r.bottom() - self.area.y) / self.cell) as usize).min(self.rows - 1);
        for row in r0..=r1 {
            for col in c0..=c1 {
                self.cells[row * self.cols + col].push(id);
            }
        }
    }

    pub fn at(&self, x: f64, y: f64) -> &[u32] {
        if !self.area.contains(x, y) {
            return &[];
        }
        let col = (((x - self.area.x) / self.cell) as usize).min(self.cols - 1);
        let row = (((y - self.area.y) / self.cell) as usize).min(self.rows - 1);
        &self.cells[row * self.cols + col]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intersect_and_union() {
        let a = Rect::new(0.0, 0.0, 10.0, 10.0);
        let b = Rect::new(5.0, 5.0, 10.0, 10.0);
        assert_eq!(a.intersect(&b), Rect::new(5.0, 5.0, 5.0, 5.0));
        assert_eq!(a.union(&b), Rect::new(0.0, 0.0, 15.0, 15.0));
        assert!(a.intersect(&Rect::new(20.0, 0.0, 5.0, 5.0)).is_empty());
    }

    #[test]
    fn grid_finds_only_nearby() {
        let mut g = Grid::new(Rect::new(0.0, 0.0, 400.0, 400.0), 100.0);
        g.insert(&Rect::new(0.0, 0.0, 50.0, 50.0), 1);
        g.insert(&Rect::new(0.0, 0.0, 400.0, 400.0), 2);
        assert_eq!(g.at(10.0, 10.0), &[1, 2]);
        assert_eq!(g.at(350.0, 350.0), &[2]);
        assert!(g.at(500.0, 10.0).is_empty());
    }
}
