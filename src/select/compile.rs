//! Instruction selection for one expression, stage by stage: elaborate the text, answer from
//! the selection cache if it holds a selection that still computes the input, else generate
//! the egglog program, run it, read the extracted term back, prove it equivalent to the input
//! and store it.

use super::byte_map;
use super::cache;
use super::catalog::Catalog;
use super::movement;
use super::moves::Moves;
use super::node::{self, Node};
use super::padding;
use super::program::{Program, Programs};
use super::prove::{prove_selection, proven_or_scalarized, Proof, VALIDATION_TIMEOUT_MS};
use super::refine::{refine, MoveSearch};
use super::run::{run_within, Budget, Candidates};
use super::sequences;
use super::term::Term;
use crate::database::Database;
use crate::error::{Error, Result};
use crate::ir::forms::elaborate_expression;
use crate::ir::limits::check_lanes;
use crate::ir::{Elem, Expr, Op};
use crate::project::Project;
use crate::spec::Target;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Instant;

/// The selected program for one expression.
pub struct Compiled {
    /// The expression as given.
    pub source: String,
    /// It elaborated, at its lane count.
    pub input: Rc<Expr>,
    /// The selected instructions.
    pub root: Rc<Node>,
    /// Their cost (a shared subterm counted once).
    pub cost: f64,
    /// The egglog program that selected it; `None` when it came from the selection cache.
    pub program: Option<Program>,
    /// Time of selection (elaboration, program generation and egglog, or the cache lookup).
    pub select_ms: f64,
    /// z3 translation validation; 0 for a cached selection, validated when it was stored.
    pub validate_ms: f64,
    /// Whether the selection came from the selection cache.
    pub cached: bool,
    /// How it was proven; `None` for a cached selection (proven when it was stored).
    pub proof: Option<Proof>,
}

/// Instructions of a selection beyond which a synthesized sequence (of at most
/// [`sequences::MAX_STEPS`]) is sought for it.
const LONG_SELECTION: usize = 4;

/// One input's extracted term (egglog text) and the selection read back from it.
pub type Extracted = (String, Rc<Node>);

/// A selection before its proof: the program that ran, the term it extracted and the term
/// read back.
pub type Selected = (Program, String, Rc<Node>);

/// Instruction selection on one target: its catalog, and the rewrites generated for it so far.
pub struct Selector {
    /// What the database holds for the target.
    pub catalog: Catalog,
    programs: Programs,
    /// The target's data-movement instructions, computed when first needed.
    moves: MoveSearch,
    /// How long z3 may take over a selection's translation validation.
    proof_timeout_ms: u32,
}

impl Selector {
    /// The selector of `target` on the project's database.
    pub fn load(project: &Project, target: Target) -> Result<Selector> {
        Ok(Selector::new(Catalog::load(project, target)?))
    }

    /// The selector over a catalog.
    pub fn new(catalog: Catalog) -> Selector {
        Selector {
            catalog,
            programs: Programs::default(),
            moves: MoveSearch::default(),
            proof_timeout_ms: VALIDATION_TIMEOUT_MS,
        }
    }

    /// How long z3 may take to validate a selection before its lanes go scalar instead
    /// ([`proven_or_scalarized`]); a minute by default.
    pub fn set_proof_timeout(&mut self, ms: u32) {
        self.proof_timeout_ms = ms;
    }

    /// Whether selection synthesizes sequences for the operators the rules leave scalarized
    /// (on by default; [`super::sequences`]). Data movement is searched for either way.
    pub fn set_synthesis(&mut self, on: bool) {
        self.moves.synthesize = on;
    }

    /// The selection an extracted term spells, with the data movement it leaves scalarized
    /// replaced by the target's own moves where those are cheaper ([`refine`]).
    pub fn read(&self, extracted: &str) -> Result<Rc<Node>> {
        let root = node::read(&Term::parse(extracted)?, &self.catalog)?;
        Ok(refine(&root, &self.catalog, &self.moves))
    }

    /// The cheapest selection of a root's extracted terms, each read back and refined, with
    /// its term (the first of equal cost).
    pub(super) fn read_cheapest(&self, terms: Candidates) -> Result<Extracted> {
        let mut best: Option<Extracted> = None;
        for term in terms {
            let root = self.read(&term)?;
            let cost = |r: &Rc<Node>| r.cost(&self.catalog);
            if best.as_ref().is_none_or(|(_, b)| cost(&root) < cost(b)) {
                best = Some((term, root));
            }
        }
        best.ok_or_else(|| Error::data("egglog", "a root has no term to extract"))
    }

    /// The target's data-movement instructions.
    pub fn moves(&self) -> &Moves {
        self.moves.moves(&self.catalog)
    }

    /// The cheapest sequence of the target's data-movement instructions computing `input`,
    /// costing less than `below`, proven by z3; None when `input` does not only move bytes or
    /// nothing cheaper is found (or z3 refutes it: byte maps are sampled, not proven).
    pub fn search_moves(&self, input: &Rc<Expr>, below: f64) -> Result<Option<Compiled>> {
        let started = Instant::now();
        let catalog = &self.catalog;
        if !byte_map::only_moves_bytes(input) {
            return Ok(None);
        }
        // The search counts moves and lookups, not the load of a lookup's literal index.
        let Some(root) = movement::search(catalog, self.moves(), input, below, movement::MAX_STEPS)
            .filter(|root| root.cost(catalog) < below)
        else {
            return Ok(None);
        };
        Ok(self.proven(input, root, started))
    }

    /// `root` found for `input` (since `started`) as a selection, once z3 proves it; None if
    /// it does not.
    fn proven(&self, input: &Rc<Expr>, root: Rc<Node>, started: Instant) -> Option<Compiled> {
        let select_ms = started.elapsed().as_secs_f64() * 1e3;
        let proving = Instant::now();
        let proof = prove_selection(&self.catalog, input, &root).ok()?;
        Some(Compiled {
            source: input.to_string(),
            input: input.clone(),
            cost: root.cost(&self.catalog),
            root,
            program: None,
            select_ms,
            validate_ms: proving.elapsed().as_secs_f64() * 1e3,
            cached: false,
            proof: Some(proof),
        })
    }

    /// The cheapest sequence of the target's instructions synthesized for `input` (an
    /// enumerative CEGIS, [`sequences::search`]) costing less than `below`, proven by z3.
    pub fn search_sequences(&self, input: &Rc<Expr>, below: f64) -> Option<Compiled> {
        let started = Instant::now();
        let catalog = &self.catalog;
        let (root, prove_ms) =
            sequences::search(catalog, self.moves.components(catalog), input, below)?;
        Some(Compiled {
            source: input.to_string(),
            input: input.clone(),
            cost: root.cost(catalog),
            root,
            program: None,
            select_ms: started.elapsed().as_secs_f64() * 1e3 - prove_ms,
            validate_ms: prove_ms,
            cached: false,
            proof: Some(Proof::Z3),
        })
    }

    /// A sequence cheaper than `cost` for `input` where a search finds one: the cheapest of
    /// the target's own moves, else (where the selection at `cost` leaves operators
    /// `scalarized` or takes more than [`LONG_SELECTION`] `instructions`) one synthesized,
    /// else, for a concatenation left scalarized, each part selected and searched on its own
    /// and the parts joined (AVX2's shuffles within 128-bit lanes).
    pub fn search_cheaper(
        &mut self,
        input: &Rc<Expr>,
        cost: f64,
        instructions: usize,
        scalarized: bool,
    ) -> Result<Option<Compiled>> {
        let synthesize = scalarized || instructions > LONG_SELECTION;
        let found = match self.search_moves(input, cost)? {
            None if synthesize => self.search_sequences(input, cost),
            found => found,
        };
        if found.is_some() || !scalarized || input.op != Op::Concat {
            return Ok(found);
        }
        self.select_by_parts(input, cost)
    }

    /// `input`, a concatenation, as its parts selected (and searched) one by one, if that
    /// costs less than `below` and is proven.
    fn select_by_parts(&mut self, input: &Rc<Expr>, below: f64) -> Result<Option<Compiled>> {
        let started = Instant::now();
        let mut roots = Vec::new();
        for part in &input.args {
            let Ok((whole, _)) = self.select_and_prove(&part.to_string(), part.clone(), started)
            else {
                return Ok(None);
            };
            let scalarized = !whole.root.scalarized().is_empty();
            let searched =
                self.search_cheaper(part, whole.cost, whole.root.operations(), scalarized)?;
            roots.push(searched.unwrap_or(whole).root);
        }
        let root = Rc::new(Node::Parts(roots));
        if root.cost(&self.catalog) >= below {
            return Ok(None);
        }
        Ok(self.proven(input, root, started))
    }

    /// The lane count of the result when none is given: the widest variable (counting the
    /// lanes it has per result lane) fills one register.
    pub fn default_lanes(&self, text: &str, declared: &HashMap<String, Elem>) -> Result<u32> {
        let macros = &self.catalog.specs.macros;
        let one = elaborate_expression(text, "expression", macros, 1, declared)?;
        let widest = one
            .vars()
            .iter()
            .map(|(_, t)| t.bits())
            .max()
            .unwrap_or(one.ty.bits())
            .max(1);
        Ok((self.catalog.target.register_bits / widest).max(1))
    }

    /// The input expression at its lane count (default: [`Selector::default_lanes`]).
    pub fn elaborate(
        &self,
        text: &str,
        lanes: Option<u32>,
        declared: &HashMap<String, Elem>,
    ) -> Result<Rc<Expr>> {
        let lanes = match lanes {
            Some(n) => check_lanes(n, "--lanes")?,
            None => self.default_lanes(text, declared)?,
        };
        elaborate_expression(
            text,
            "expression",
            &self.catalog.specs.macros,
            lanes,
            declared,
        )
    }

    /// The egglog program that selects for an elaborated input.
    pub fn program(&mut self, input: &Rc<Expr>) -> Result<Program> {
        self.programs
            .generate(&self.catalog, input)
            .map_err(|m| Error::Usage(format!("expression: {m}")))
    }

    /// Selects for several elaborated inputs with one egglog program (see
    /// [`Programs::generate_many`]), without proving: each input's extracted term and the
    /// selection read back from it, or none for an input the program left unsettled, to be
    /// selected again by fewer (see [`super::run`]). The error is the program's (generation or a
    /// budget), for all of them; the inputs must agree on their variables' types.
    pub fn select_many(&mut self, inputs: &[Rc<Expr>]) -> Result<Vec<Option<Result<Extracted>>>> {
        let program = self
            .programs
            .generate_many(&self.catalog, inputs)
            .map_err(|m| Error::Usage(format!("expression: {m}")))?;
        let extracted = run_within(&program, Budget::DEFAULT)?;
        if extracted.len() != inputs.len() {
            return Err(Error::data("egglog", "the program extracted too few terms"));
        }
        Ok(extracted
            .into_iter()
            .map(|terms| terms.map(|terms| self.read_cheapest(terms)))
            .collect())
    }

    /// Elaborates, selects and proves one expression. With `cache` (the database holding the
    /// selection cache) a selection stored before is reused without egglog or z3, and a new
    /// one is stored once it is proven.
    pub fn compile(
        &mut self,
        text: &str,
        lanes: Option<u32>,
        declared: &HashMap<String, Elem>,
        cache: Option<&mut Database>,
    ) -> Result<Compiled> {
        let started = Instant::now();
        let input = self.elaborate(text, lanes, declared)?;
        let catalog = &self.catalog;
        let stored = match cache.as_deref() {
            Some(db) => cache::lookup(db, catalog, &input, declared)?,
            None => None,
        };
        // A stored term that no longer reads back, or that computes something else on random
        // inputs, is a miss: it is selected again and overwritten.
        if let Some(root) = stored
            .and_then(|text| self.read(&text).ok())
            .filter(|root| cache::agrees_on_random_inputs(catalog, &input, root))
        {
            return Ok(Compiled {
                source: text.to_string(),
                input,
                cost: root.cost(catalog),
                root,
                program: None,
                select_ms: started.elapsed().as_secs_f64() * 1e3,
                validate_ms: 0.0,
                cached: true,
                proof: None,
            });
        }
        let (compiled, extracted) = match self.select_padded(text, &input, declared, started) {
            Some(padded) if !self.own_lanes_may_be_cheaper(&input, &padded.0.root) => padded,
            Some(padded) => match self.select_and_prove(text, input, started) {
                Ok(own) if own.0.cost <= padded.0.cost => own,
                _ => padded,
            },
            None => self.select_and_prove(text, input, started)?,
        };
        let (catalog, input, cost) = (&self.catalog, &compiled.input, compiled.cost);
        match cache {
            Some(db) if db.is_read_only() => crate::error::note(
                "isadb: the database is read-only: this selection is not kept in its cache",
            ),
            Some(db) => {
                if let Some(extracted) = extracted {
                    cache::store(db, catalog, input, declared, &extracted, cost)?
                }
            }
            None => {}
        }
        Ok(compiled)
    }

    /// `input` (elaborated from `text`) at the lane count it is selected at instead of its
    /// own, where its own is not one the rules reach ([`padding`]).
    pub fn padded(
        &self,
        text: &str,
        input: &Rc<Expr>,
        declared: &HashMap<String, Elem>,
    ) -> Option<Rc<Expr>> {
        let lanes = padding::padded_lanes(input)?;
        self.elaborate(text, Some(lanes), declared)
            .ok()
            .filter(|wide| wide.ty.lanes == lanes)
    }

    /// Whether `input`, selected padded as `padded`, is worth selecting at its own lane count
    /// too: where the padded selection computes operators lane by lane (the padding lanes
    /// too), or every value of the input is whole registers.
    pub fn own_lanes_may_be_cheaper(&self, input: &Expr, padded: &Node) -> bool {
        !padded.scalarized().is_empty()
            || padding::whole_registers(input, self.catalog.target.register_bits)
    }

    /// The selection of `input` read from the term `wide` extracted for its padded form
    /// ([`Selector::padded`]): the term's low lanes, where they agree with `input` on random
    /// inputs (their proof is still to come).
    pub fn low_lanes(&self, input: &Rc<Expr>, wide: &str) -> Option<Extracted> {
        let catalog = &self.catalog;
        let term = Term::parse(wide).ok()?;
        let whole = node::read(&term, catalog).ok()?;
        let extracted = padding::low_lanes(&term, &whole, input.ty.lanes, catalog)?.to_string();
        let root = self.read(&extracted).ok()?;
        cache::agrees_on_random_inputs(catalog, input, &root).then_some((extracted, root))
    }

    /// `input` (elaborated from `text`) selected as the low lanes of its padded form
    /// ([`Selector::padded`]) and proven; `None` where its own lane count is reached or the
    /// padded selection fails.
    fn select_padded(
        &mut self,
        text: &str,
        input: &Rc<Expr>,
        declared: &HashMap<String, Elem>,
        started: Instant,
    ) -> Option<(Compiled, Option<String>)> {
        let wide = self.padded(text, input, declared)?;
        let (program, wide_term, _) = self.select(&wide).ok()?;
        let (extracted, root) = self.low_lanes(input, &wide_term)?;
        // A refutation leaves the input to its own selection.
        let selected = (program, extracted, root);
        self.validated(text, input.clone(), selected, started).ok()
    }

    /// [`proven_or_scalarized`], `root` proven with its folded constants as the instructions
    /// they were folded from (`Folds::unfolded` in `fold.rs`).
    pub fn proven_or_scalarized(
        &self,
        input: &Rc<Expr>,
        root: Rc<Node>,
        timeout_ms: u32,
    ) -> Result<(Rc<Node>, Proof)> {
        let proven_by = self.moves.folds.unfolded(&root);
        proven_or_scalarized(&self.catalog, input, (root, proven_by), timeout_ms)
    }

    /// Selects for an elaborated input (`source` names it) and proves the selection, the
    /// selection's time counted from `started`; the extracted term besides, unless z3 could
    /// not decide it and every lane went scalar.
    pub fn select_and_prove(
        &mut self,
        source: &str,
        input: Rc<Expr>,
        started: Instant,
    ) -> Result<(Compiled, Option<String>)> {
        let (program, extracted, root) = self.select(&input)?;
        self.validated(source, input, (program, extracted, root), started)
    }

    /// A selection of `input` (`source` names it; selected since `started`) proven, or every
    /// lane scalar where z3 cannot decide it; the extracted term besides, unless its lanes
    /// went scalar so. A refutation is an error.
    fn validated(
        &self,
        source: &str,
        input: Rc<Expr>,
        (program, extracted, root): Selected,
        started: Instant,
    ) -> Result<(Compiled, Option<String>)> {
        let catalog = &self.catalog;
        let select_ms = started.elapsed().as_secs_f64() * 1e3;
        let started = Instant::now();
        let (proven, proof) =
            self.proven_or_scalarized(&input, root.clone(), self.proof_timeout_ms)?;
        // The term to cache: none where its lanes went scalar because z3 could not decide it.
        let extracted = Rc::ptr_eq(&proven, &root).then_some(extracted);
        let root = proven;
        let validate_ms = started.elapsed().as_secs_f64() * 1e3;
        let compiled = Compiled {
            source: source.to_string(),
            cost: root.cost(catalog),
            input,
            root,
            program: Some(program),
            select_ms,
            validate_ms,
            cached: false,
            proof: Some(proof),
        };
        Ok((compiled, extracted))
    }
}
