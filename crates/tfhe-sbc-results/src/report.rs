//! The run's context (mode, budget, output directory, progress) and the page's pieces: sections, tables.

use crate::timing::{Budget, Stamp};
use indicatif::ProgressBar;
use std::path::{Path, PathBuf};

/// What every section needs.
pub struct Context {
    /// `--quick`: fewer sizes and samples.
    pub quick: bool,
    /// How long to measure one case.
    pub budget: Budget,
    /// Where the plots go (`<out>/results/`).
    pub plot_dir: PathBuf,
    /// The page's and the plots' stamp.
    pub stamp: Stamp,
    /// The progress bar (one tick per step).
    pub progress: ProgressBar,
}

impl Context {
    /// Shows `what` as the current step and logs it.
    pub fn step(&self, what: &str) {
        tracing::info!("{what}");
        self.progress.set_message(what.to_string());
        self.progress.tick();
    }
}

/// One section of the page: its title, text (Markdown) and plots (file names in the plot directory).
pub struct Section {
    /// The heading.
    pub title: String,
    /// The Markdown body.
    pub markdown: String,
    /// The plots: file name and caption (what the reader should see in it).
    pub plots: Vec<(String, String)>,
    /// Plots that failed, with the reason.
    pub errors: Vec<String>,
}

impl Section {
    /// A section with no plots yet.
    pub fn new(title: &str, markdown: String) -> Self {
        Self {
            title: title.into(),
            markdown,
            plots: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// Draws one plot with `draw(path, stamp)` into the plot directory as `name` and links it, `caption`
    /// (what the reader should see in it) below.
    pub fn plot(
        &mut self,
        ctx: &Context,
        name: &str,
        caption: String,
        draw: impl FnOnce(&Path, &str) -> Result<(), String>,
    ) {
        let path = ctx.plot_dir.join(name);
        match draw(&path, &ctx.stamp.line()) {
            Ok(()) => self.plots.push((name.to_string(), caption)),
            Err(e) => {
                tracing::error!("{name}: {e}");
                self.errors.push(format!("{name}: {e}"));
            }
        }
    }

    /// [`Section::plot`] of a bar chart: `chart` into `name` (an SVG file name), `caption` below.
    pub fn bars(&mut self, ctx: &Context, name: &str, caption: String, chart: &crate::plot::BarChart<'_>) {
        self.plot(ctx, name, caption, |path, stamp| chart.write(path, stamp));
    }

    /// The section as Markdown, plots linked from `results/`.
    pub fn render(&self) -> String {
        let mut s = format!("## {}\n\n{}\n", self.title, self.markdown.trim_end());
        for (p, caption) in &self.plots {
            s.push_str(&format!("\n![{p}](results/{p})\n\n_What to see:_ {caption}\n"));
        }
        for e in &self.errors {
            s.push_str(&format!("\nPlot not drawn: {e}\n"));
        }
        s.push('\n');
        s
    }
}

/// A Markdown table.
pub fn table<S: AsRef<str>>(header: &[S], rows: &[Vec<String>]) -> String {
    let mut s = String::new();
    let line = |cells: Vec<&str>| format!("| {} |\n", cells.join(" | "));
    s.push_str(&line(header.iter().map(AsRef::as_ref).collect()));
    s.push_str(&format!("|{}\n", "---|".repeat(header.len())));
    for r in rows {
        s.push_str(&line(r.iter().map(String::as_str).collect()));
    }
    s
}
