//! Terms of the float DSP dialect of Diospyros and Isaria, hash-consed: every distinct sub-term
//! is stored once in a [`Dag`] and named by its [`Id`], so a kernel that prints as hundreds of
//! thousands of nodes (qr-decomp) is a few hundred entries here.

use std::collections::HashMap;

/// Index of a node in its [`Dag`].
pub type Id = u32;

/// An operator of the dialect. Scalars: literals, array reads and arithmetic; vectors: `Vec`
/// (lanes gathered from scalars) and the lane-wise vector operators; `Concat` joins vectors and
/// `List` holds the kernel's outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    Num(i64),
    /// `(Get X i)`: element `i` of input array number `.0` (see [`Dag::arrays`]).
    Get(u32, u32),
    Add,
    Sub,
    Mul,
    Div,
    Neg,
    Sqrt,
    Sgn,
    Vec,
    VecAdd,
    VecMinus,
    VecMul,
    VecDiv,
    VecMAC,
    VecNeg,
    VecSqrt,
    VecSgn,
    Concat,
    List,
}

/// The operators with a fixed name, in the dialect's spelling (Diospyros's `+`, `VecMAC`, ...).
pub const NAMED: [(Op, &str); 18] = [
    (Op::Add, "+"),
    (Op::Sub, "-"),
    (Op::Mul, "*"),
    (Op::Div, "/"),
    (Op::Neg, "neg"),
    (Op::Sqrt, "sqrt"),
    (Op::Sgn, "sgn"),
    (Op::Vec, "Vec"),
    (Op::VecAdd, "VecAdd"),
    (Op::VecMinus, "VecMinus"),
    (Op::VecMul, "VecMul"),
    (Op::VecDiv, "VecDiv"),
    (Op::VecMAC, "VecMAC"),
    (Op::VecNeg, "VecNeg"),
    (Op::VecSqrt, "VecSqrt"),
    (Op::VecSgn, "VecSgn"),
    (Op::Concat, "Concat"),
    (Op::List, "List"),
];

impl Op {
    /// The operator named `name` (not `Get` or a literal), if any.
    pub fn named(name: &str) -> Option<Op> {
        NAMED.iter().find(|(_, n)| *n == name).map(|(op, _)| *op)
    }

    /// The dialect's name of the operator (`Num`/`Get` print differently).
    pub fn name(&self) -> &'static str {
        match self {
            Op::Num(_) => "Num",
            Op::Get(..) => "Get",
            _ => NAMED
                .iter()
                .find(|(o, _)| o == self)
                .map(|(_, n)| *n)
                .expect("every other operator is named"),
        }
    }

    /// The number of operands, or None for the variadic `Vec` and `List`.
    pub fn arity(&self) -> Option<usize> {
        Some(match self {
            Op::Num(_) | Op::Get(..) => 0,
            Op::Neg | Op::Sqrt | Op::Sgn | Op::VecNeg | Op::VecSqrt | Op::VecSgn => 1,
            Op::VecMAC => 3,
            Op::Vec | Op::List => return None,
            _ => 2,
        })
    }

    /// Whether the operator produces a vector (or a list of outputs).
    pub fn is_vector(&self) -> bool {
        matches!(
            self,
            Op::Vec
                | Op::VecAdd
                | Op::VecMinus
                | Op::VecMul
                | Op::VecDiv
                | Op::VecMAC
                | Op::VecNeg
                | Op::VecSqrt
                | Op::VecSgn
                | Op::Concat
                | Op::List
        )
    }

    /// Whether the operator is a leaf (literal or array read).
    pub fn is_leaf(&self) -> bool {
        matches!(self, Op::Num(_) | Op::Get(..))
    }

    /// The lane-wise vector operator computing this scalar operator, and back.
    pub fn vector_of(&self) -> Option<Op> {
        Some(match self {
            Op::Add => Op::VecAdd,
            Op::Sub => Op::VecMinus,
            Op::Mul => Op::VecMul,
            Op::Div => Op::VecDiv,
            Op::Neg => Op::VecNeg,
            Op::Sqrt => Op::VecSqrt,
            Op::Sgn => Op::VecSgn,
            _ => return None,
        })
    }

    /// The scalar operator a lane-wise vector operator applies in each lane (`VecMAC` has none).
    pub fn scalar_of(&self) -> Option<Op> {
        [
            Op::Add,
            Op::Sub,
            Op::Mul,
            Op::Div,
            Op::Neg,
            Op::Sqrt,
            Op::Sgn,
        ]
        .into_iter()
        .find(|s| s.vector_of() == Some(*self))
    }
}

/// An operator applied to operands.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Node {
    pub op: Op,
    pub args: Box<[Id]>,
}

/// A hash-consed term graph with the names of the input arrays.
#[derive(Clone, Debug, Default)]
pub struct Dag {
    nodes: Vec<Node>,
    memo: HashMap<Node, Id>,
    arrays: Vec<String>,
}

impl Dag {
    pub fn new() -> Dag {
        Dag::default()
    }

    /// The node `op(args)`, added unless it is already present.
    pub fn add(&mut self, op: Op, args: &[Id]) -> Id {
        let node = Node {
            op,
            args: args.into(),
        };
        if let Some(&id) = self.memo.get(&node) {
            return id;
        }
        let id = self.nodes.len() as Id;
        self.nodes.push(node.clone());
        self.memo.insert(node, id);
        id
    }

    pub fn num(&mut self, n: i64) -> Id {
        self.add(Op::Num(n), &[])
    }

    /// `(Get name index)`, registering the array name.
    pub fn get(&mut self, name: &str, index: u32) -> Id {
        let a = self.array(name);
        self.add(Op::Get(a, index), &[])
    }

    /// The number of an input array, registering it.
    pub fn array(&mut self, name: &str) -> u32 {
        match self.arrays.iter().position(|a| a == name) {
            Some(i) => i as u32,
            None => {
                self.arrays.push(name.to_string());
                self.arrays.len() as u32 - 1
            }
        }
    }

    /// The input arrays' names, by number.
    pub fn arrays(&self) -> &[String] {
        &self.arrays
    }

    #[cfg(test)]
    pub fn node(&self, id: Id) -> &Node {
        &self.nodes[id as usize]
    }

    pub fn op(&self, id: Id) -> Op {
        self.nodes[id as usize].op
    }

    pub fn args(&self, id: Id) -> &[Id] {
        &self.nodes[id as usize].args
    }

    /// Number of distinct nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// The nodes reachable from `roots`, children before parents.
    pub fn reachable(&self, roots: &[Id]) -> Vec<Id> {
        let mut seen = vec![false; self.nodes.len()];
        let mut order = Vec::new();
        let mut stack: Vec<(Id, bool)> = roots.iter().rev().map(|&r| (r, false)).collect();
        while let Some((id, done)) = stack.pop() {
            if done {
                order.push(id);
                continue;
            }
            if seen[id as usize] {
                continue;
            }
            seen[id as usize] = true;
            stack.push((id, true));
            for &a in self.args(id).iter().rev() {
                if !seen[a as usize] {
                    stack.push((a, false));
                }
            }
        }
        order
    }

    /// How many nodes `root` prints as (the tree size, sharing expanded), saturating.
    pub fn tree_size(&self, root: Id) -> u64 {
        let mut size: HashMap<Id, u64> = HashMap::new();
        for id in self.reachable(&[root]) {
            let n = self
                .args(id)
                .iter()
                .fold(1u64, |s, a| s.saturating_add(size[a]));
            size.insert(id, n);
        }
        size[&root]
    }

    /// Copies `id` from `other` into this graph (arrays matched by name).
    #[cfg(test)]
    pub fn import(&mut self, other: &Dag, id: Id) -> Id {
        let mut map: HashMap<Id, Id> = HashMap::new();
        for n in other.reachable(&[id]) {
            let node = other.node(n);
            let op = match node.op {
                Op::Get(a, i) => Op::Get(self.array(&other.arrays[a as usize]), i),
                op => op,
            };
            let args: Vec<Id> = node.args.iter().map(|a| map[a]).collect();
            map.insert(n, self.add(op, &args));
        }
        map[&id]
    }

    /// The term as an s-expression in the dialect's syntax (sharing expanded).
    #[cfg(test)]
    pub fn print(&self, root: Id) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let mut stack: Vec<Result<Id, &'static str>> = vec![Ok(root)];
        while let Some(item) = stack.pop() {
            let id = match item {
                Ok(id) => id,
                Err(text) => {
                    out.push_str(text);
                    continue;
                }
            };
            let node = self.node(id);
            match node.op {
                Op::Num(n) => write!(out, "{n}").expect("string write"),
                Op::Get(a, i) => {
                    write!(out, "(Get {} {i})", self.arrays[a as usize]).expect("string write")
                }
                op => {
                    write!(out, "({}", op.name()).expect("string write");
                    stack.push(Err(")"));
                    for &a in node.args.iter().rev() {
                        stack.push(Ok(a));
                        stack.push(Err(" "));
                    }
                }
            }
        }
        out
    }
}

/// What a cost function needs to know of an operand: its cost and what kind of leaf it is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Operand {
    pub cost: f64,
    pub leaf: Leaf,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leaf {
    /// A computed value.
    No,
    /// The literal 0.
    Zero,
    /// Another literal or a pattern's wildcard.
    Literal,
    /// A read of this input array.
    Read(u32),
}

impl Leaf {
    pub fn of(op: Op) -> Leaf {
        match op {
            Op::Num(0) => Leaf::Zero,
            Op::Num(_) => Leaf::Literal,
            Op::Get(a, _) => Leaf::Read(a),
            _ => Leaf::No,
        }
    }
}

impl Dag {
    /// Diospyros's partition of the outputs into `Vec`s of `width` lanes, the last zero-padded.
    pub fn partition(&mut self, outputs: &[Id], width: usize) -> Id {
        let zero = self.num(0);
        let chunks: Vec<Id> = outputs
            .chunks(width)
            .map(|c| {
                let mut lanes = c.to_vec();
                lanes.resize(width, zero);
                self.add(Op::Vec, &lanes)
            })
            .collect();
        self.concat(&chunks)
    }

    /// Vectors joined by right-nested `Concat`s.
    pub fn concat(&mut self, parts: &[Id]) -> Id {
        let (last, init) = parts.split_last().expect("a kernel has outputs");
        init.iter()
            .rev()
            .fold(*last, |rest, &v| self.add(Op::Concat, &[v, rest]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_terms_share_one_node_and_print_expanded() {
        let mut d = Dag::new();
        let a = d.get("A", 0);
        let b = d.get("B", 1);
        let m = d.add(Op::Mul, &[a, b]);
        let m2 = d.add(Op::Mul, &[a, b]);
        assert_eq!(m, m2);
        let s = d.add(Op::Add, &[m, m]);
        let l = d.add(Op::List, &[s, m]);
        assert_eq!(d.len(), 5);
        assert_eq!(
            d.print(l),
            "(List (+ (* (Get A 0) (Get B 1)) (* (Get A 0) (Get B 1))) (* (Get A 0) (Get B 1)))"
        );
        assert_eq!(d.tree_size(l), 11);
        assert_eq!(Op::named("VecMAC"), Some(Op::VecMAC));
        assert_eq!(Op::VecMinus.scalar_of(), Some(Op::Sub));
    }
}
