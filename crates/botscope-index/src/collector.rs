//! A collector that passes on only the versions in force at the time asked.

use std::collections::HashMap;
use std::sync::Arc;

use tantivy::{BitSet, DocId, SegmentReader, index::SegmentId};

/// A collector that passes on only the latest versions (the bit sets of
/// [`Index::latest_sets`]).
pub(crate) struct Latest<C> {
    pub(crate) sets: HashMap<SegmentId, Arc<BitSet>>,
    pub(crate) collector: C,
}

pub(crate) struct LatestSegment<S> {
    pub(crate) set: Option<Arc<BitSet>>,
    pub(crate) inner: S,
    pub(crate) block: Vec<DocId>,
}

impl<C: tantivy::collector::Collector> tantivy::collector::Collector for Latest<C> {
    type Fruit = C::Fruit;
    type Child = LatestSegment<C::Child>;

    fn for_segment(&self, ord: u32, seg: &SegmentReader) -> tantivy::Result<Self::Child> {
        Ok(LatestSegment {
            set: self.sets.get(&seg.segment_id()).cloned(),
            inner: self.collector.for_segment(ord, seg)?,
            block: Vec::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        self.collector.requires_scoring()
    }

    fn merge_fruits(
        &self,
        fruits: Vec<<C::Child as tantivy::collector::SegmentCollector>::Fruit>,
    ) -> tantivy::Result<C::Fruit> {
        self.collector.merge_fruits(fruits)
    }
}

impl<S: tantivy::collector::SegmentCollector> tantivy::collector::SegmentCollector
    for LatestSegment<S>
{
    type Fruit = S::Fruit;

    fn collect(&mut self, doc: DocId, score: tantivy::Score) {
        if self.set.as_ref().is_some_and(|s| s.contains(doc)) {
            self.inner.collect(doc, score);
        }
    }

    fn collect_block(&mut self, docs: &[DocId]) {
        let Some(set) = &self.set else { return };
        self.block.clear();
        self.block.extend(docs.iter().filter(|&&d| set.contains(d)));
        if !self.block.is_empty() {
            self.inner.collect_block(&self.block);
        }
    }

    fn harvest(self) -> S::Fruit {
        self.inner.harvest()
    }
}
