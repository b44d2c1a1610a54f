//! The page line: business calls never reach archive pages, folds never write below the line.

use std::collections::BTreeMap;

use proptest::prelude::*;
use redb::ReadableDatabase;

use super::{archive, entry};
use crate::format::tables::PAGES;
use crate::{ARCHIVE_BASE, ArchiveError, PageNo};

#[test]
fn business_calls_refuse_archive_pages() {
    let (_dir, archive) = archive();
    archive.fold(b"s", &[entry(1, 0)]).unwrap();
    for page in [ARCHIVE_BASE, ARCHIVE_BASE + 1, u64::MAX] {
        let page = PageNo(page);
        assert!(
            matches!(archive.put_page(page, b"x"), Err(ArchiveError::ReservedPage(p)) if p == page)
        );
        assert!(matches!(
            archive.get_page(page),
            Err(ArchiveError::ReservedPage(_))
        ));
        assert!(matches!(
            archive.delete_page(page),
            Err(ArchiveError::ReservedPage(_))
        ));
        assert!(matches!(
            archive.pages(PageNo(0)..=page),
            Err(ArchiveError::ReservedPage(_))
        ));
    }
    // The archive record is untouched.
    assert_eq!(archive.stats().unwrap().records, 1);
    archive.check_invariants().unwrap();
}

#[test]
fn business_pages_round_trip() {
    let (_dir, archive) = archive();
    archive.put_page(PageNo(7), b"seven").unwrap();
    archive.put_page(PageNo(ARCHIVE_BASE - 1), b"top").unwrap();
    assert_eq!(
        archive.get_page(PageNo(7)).unwrap(),
        Some(b"seven".to_vec())
    );
    assert_eq!(archive.get_page(PageNo(8)).unwrap(), None);
    assert_eq!(
        archive.pages(PageNo(0)..=PageNo(ARCHIVE_BASE - 1)).unwrap(),
        vec![
            (PageNo(7), b"seven".to_vec()),
            (PageNo(ARCHIVE_BASE - 1), b"top".to_vec())
        ]
    );
    assert!(archive.delete_page(PageNo(7)).unwrap());
    assert!(!archive.delete_page(PageNo(7)).unwrap());
}

#[derive(Debug, Clone)]
enum Op {
    Put(u64, u8),
    Delete(u64),
    Fold(usize),
}

fn page() -> impl Strategy<Value = u64> {
    prop_oneof![
        0..16u64,
        (ARCHIVE_BASE - 16)..ARCHIVE_BASE,
        ARCHIVE_BASE..ARCHIVE_BASE + 16,
        (u64::MAX - 4)..=u64::MAX
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn archive_and_business_pages_never_overlap(ops in prop::collection::vec(prop_oneof![
        (page(), any::<u8>()).prop_map(|(p, b)| Op::Put(p, b)),
        page().prop_map(Op::Delete),
        (1..5usize).prop_map(Op::Fold),
    ], 1..30)) {
        let (_dir, archive) = archive();
        let mut business: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
        let mut folded = 0u64;
        for op in ops {
            match op {
                Op::Put(p, b) => {
                    let r = archive.put_page(PageNo(p), &[b]);
                    if p < ARCHIVE_BASE {
                        r.unwrap();
                        business.insert(p, vec![b]);
                    } else {
                        prop_assert!(matches!(r, Err(ArchiveError::ReservedPage(_))));
                    }
                }
                Op::Delete(p) => {
                    let r = archive.delete_page(PageNo(p));
                    if p < ARCHIVE_BASE {
                        prop_assert_eq!(r.unwrap(), business.remove(&p).is_some());
                    } else {
                        prop_assert!(r.is_err());
                    }
                }
                Op::Fold(n) => {
                    let batch: Vec<_> = (0..n as u64).map(|i| entry(folded + i + 1, 0)).collect();
                    archive.fold(b"s", &batch).unwrap();
                    folded += n as u64;
                }
            }
            // Everything below the line is exactly the business model; everything at or
            // above it is an archive record.
            let read = archive.db().unwrap().begin_read().unwrap();
            let pages = read.open_table(PAGES).unwrap();
            let below: BTreeMap<u64, Vec<u8>> = pages
                .range(..ARCHIVE_BASE)
                .unwrap()
                .map(|r| { let (k, v) = r.unwrap(); (k.value(), v.value().to_vec()) })
                .collect();
            prop_assert_eq!(&below, &business);
            prop_assert_eq!(pages.range(ARCHIVE_BASE..).unwrap().count() as u64, folded);
            archive.check_invariants().unwrap();
        }
    }
}
