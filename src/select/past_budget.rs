//! Selection past the budget: an input whose e-graph passes isadb's budget is selected by
//! halves of its lanes ([`halves`]), else by pieces ([`pieces`]); where every cut passes the
//! budget too, with the stored rules set aside, else with its operators left to
//! [`super::refine`] as they are. Total selection's last resorts: no well-typed input ends at
//! the budget's error.

use super::cache;
use super::compile::{Selected, Selector};
use super::halves;
use super::node::Node;
use super::pieces::{self, Padding, Value};
use super::run::run;
use super::term::Term;
use crate::error::{Error, Result};
use crate::ir::Expr;
use std::rc::Rc;

/// The most cuts into pieces one selection makes ([`pieces`]): a 30-term sum, past the budget
/// at every cut, stops cutting in seconds (and is selected without the stored rules) instead
/// of cutting term by term for half an hour; `_mm256_sra_epi16` on HVX needs two, NEON's
/// `(select(1 != x_i16, 100, 7) + max(3, x_i16)) + (max(z_i16, z_i16) - (x_i16 - 4))` more
/// than four.
const MOST_CUTS: usize = 8;

impl Selector {
    /// Selects for an elaborated input without proving it: the program that ran, the term it
    /// extracted and the term read back.
    ///
    /// An input whose e-graph passes the budget is selected by halves of its lanes where it
    /// can be ([`halves`]), else by pieces ([`pieces`]), at most [`MOST_CUTS`] cuts in all; the
    /// program is then the one that selected a half, or the root. Where those pass the budget
    /// too, the input is selected without the stored rules ([`Selector::without_stored_rules`]).
    pub fn select(&mut self, input: &Rc<Expr>) -> Result<Selected> {
        let mut cuts = MOST_CUTS;
        match self.select_cutting(input, &mut cuts) {
            Err(budget @ Error::Budget(_)) => self.without_stored_rules(input, budget),
            selected => selected,
        }
    }

    /// [`Selector::select`] with `cuts` cuts into pieces left.
    fn select_cutting(&mut self, input: &Rc<Expr>, cuts: &mut usize) -> Result<Selected> {
        let program = self.program(input)?;
        match run(&program) {
            Ok(terms) => {
                let (extracted, root) = self.read_cheapest(terms)?;
                Ok((program, extracted, root))
            }
            Err(budget @ Error::Budget(_)) => self.past_budget(input, budget, cuts),
            Err(e) => Err(e),
        }
    }

    /// Selects an input that passed the budget (`budget` is that error, returned when neither
    /// way applies): by halves of its lanes ([`halves`]), else by pieces ([`pieces`]).
    pub fn select_past_budget(&mut self, input: &Rc<Expr>, budget: Error) -> Result<Selected> {
        let mut cuts = MOST_CUTS;
        match self.past_budget(input, budget, &mut cuts) {
            Err(budget @ Error::Budget(_)) => self.without_stored_rules(input, budget),
            selected => selected,
        }
    }

    /// The last resort of total selection for an input whose e-graph passes the budget however
    /// it is cut (a 30-term sum, whose sums reassociate without end; HVX's
    /// `rounding_shift_right(x_i16, y_i16)`): the input selected with the stored rules set
    /// aside, by the target's lowerings and the rewrites sound by construction alone, else its
    /// operators left to [`super::refine`] as they are (which computes what it finds no
    /// instructions for in scalar code). `budget` is the error returned where both fail.
    fn without_stored_rules(&mut self, input: &Rc<Expr>, budget: Error) -> Result<Selected> {
        let stored = [
            std::mem::take(&mut self.catalog.lift_rules),
            std::mem::take(&mut self.catalog.simplify_rules),
            std::mem::take(&mut self.catalog.lower_rules),
        ];
        let selected = self.program(input).and_then(|program| {
            let (extracted, root) = self.read_cheapest(run(&program)?)?;
            Ok((program, extracted, root))
        });
        [
            self.catalog.lift_rules,
            self.catalog.simplify_rules,
            self.catalog.lower_rules,
        ] = stored;
        selected
            .or_else(|_| self.unlowered(input))
            .map_err(|_| budget)
    }

    fn past_budget(
        &mut self,
        input: &Rc<Expr>,
        budget: Error,
        cuts: &mut usize,
    ) -> Result<Selected> {
        if let Some(selected) = self.select_by_halves(input, cuts) {
            return selected;
        }
        if pieces::cut_at_root(input).is_none() {
            return self.unlowered(input);
        }
        match cuts.checked_sub(1) {
            Some(left) => {
                *cuts = left;
                self.select_by_pieces(input, cuts).unwrap_or(Err(budget))
            }
            None => Err(budget),
        }
    }

    /// `input`, one operator over variables and constants that passed the budget (HVX's
    /// `reduce_add(8, x_u8)` at one lane, its operand doubled to a register), as the operator
    /// itself: left to [`super::refine`], which searches the target's moves and sequences for
    /// it, else computes its lanes in scalar code (the last resort of total selection).
    fn unlowered(&mut self, input: &Rc<Expr>) -> Result<Selected> {
        let program = self.program(input)?;
        let term = super::encode::ground(input).map_err(|e| Error::data("selection", e))?;
        let extracted = Term::Out(Box::new(term)).to_string();
        let root = self.read(&extracted)?;
        Ok((program, extracted, root))
    }

    /// The input selected as its low half of lanes, selected once and read at both halves;
    /// `None` when it cannot be split so.
    fn select_by_halves(&mut self, input: &Rc<Expr>, cuts: &mut usize) -> Option<Result<Selected>> {
        let half = halves::low_half(input)?;
        let (program, low, _) = match self.select_cutting(&half, cuts) {
            Ok(selected) => selected,
            Err(e) => return Some(Err(e)),
        };
        let both = halves::both_halves(&Term::parse(&low).ok()?, &half)?;
        let extracted = both.to_string();
        Some(self.read(&extracted).map(|root| (program, extracted, root)))
    }

    /// The input selected as its root over fresh inputs, each standing for a computed operand
    /// selected on its own; `None` when it cannot be cut so. Reads past a piece's own lanes
    /// see its register as it is where that still computes the input on random inputs, else
    /// zeros, as a padded input has.
    fn select_by_pieces(&mut self, input: &Rc<Expr>, cuts: &mut usize) -> Option<Result<Selected>> {
        let cut = pieces::cut_at_root(input)?;
        let mut selected = vec![];
        for e in std::iter::once(&cut.root).chain(cut.pieces.iter().map(|(_, e)| e)) {
            match self.select_cutting(e, cuts) {
                Ok((program, text, root)) => {
                    selected.push((program, Term::parse(&text).ok()?, root))
                }
                Err(e) => return Some(Err(e)),
            }
        }
        let (program, root_term, _) = selected.remove(0);
        let whole = |padding| -> Option<(String, Result<Rc<Node>>)> {
            let mut term = root_term.clone();
            for ((name, piece), (_, text, root)) in cut.pieces.iter().zip(&selected) {
                let value = Value {
                    term: &pieces::computed(text, piece.ty)?,
                    ty: root.ty(&self.catalog),
                    lanes: piece.ty.lanes,
                    padding,
                };
                term = pieces::substitute(&term, name, &value)?;
            }
            let extracted = term.to_string();
            let read = self.read(&extracted);
            Some((extracted, read))
        };
        let (extracted, read) = match whole(Padding::Register)? {
            (text, Ok(root)) if cache::agrees_on_random_inputs(&self.catalog, input, &root) => {
                (text, Ok(root))
            }
            _ => whole(Padding::Zeros)?,
        };
        Some(read.map(|root| (program, extracted, root)))
    }
}
