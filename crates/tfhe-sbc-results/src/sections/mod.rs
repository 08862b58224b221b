//! The page's sections, one per figure or table of the paper.

pub mod fig3;
pub mod firmware;
pub mod integers;
pub mod sampling;
pub mod scale;
pub mod table1;
