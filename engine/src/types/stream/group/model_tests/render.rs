//! Rendering operations into arguments, against the model's state at that moment.

use proptest::sample::Index;

use super::model::GroupModel;
use super::ops::{
    BAD_IDS, Bound, CONSUMERS, ClaimOpt, Cmd, FIELDS, GROUPS, GroupId, IdArg, IdGen, IdTok, IntTok,
    KEYS, Mangle, PlainFrom, ReadFrom, STRAY_TOKENS, Trim,
};
use crate::id::StreamId;

/// Renders ids against what one key holds in the model.
struct Ids<'a> {
    model: &'a GroupModel,
    key: &'a [u8],
}

impl Ids<'_> {
    fn pending(&self) -> Vec<StreamId> {
        self.model
            .groups_of(self.key)
            .flat_map(|(_, g)| g.pel.keys().copied())
            .collect()
    }

    fn resolve(&self, choice: &IdGen) -> StreamId {
        let stream = self.model.stream(self.key).ok().flatten();
        let last_id = stream.map_or(StreamId::MIN, |s| s.last_id);
        match choice {
            IdGen::Known(index) => {
                let mut known = self.pending();
                known.extend(self.model.groups_of(self.key).map(|(_, g)| g.last_id));
                if let Some(s) = stream {
                    known.extend(s.nodes.iter().flatten().map(|e| e.id));
                    known.extend([s.last_id, s.first_id, s.max_deleted_entry_id]);
                }
                known.push(StreamId::new(1, 0));
                known[index.index(known.len())]
            }
            IdGen::Pending(index) => match self.pending().as_slice() {
                [] => self.resolve(&IdGen::Known(*index)),
                pending => pending[index.index(pending.len())],
            },
            IdGen::NearLast {
                ms_delta,
                seq_delta,
            } => {
                let ms = last_id.ms.saturating_add(u64::from(*ms_delta));
                let seq = if *ms_delta == 0 {
                    last_id.seq.saturating_add_signed(i64::from(*seq_delta))
                } else {
                    u64::from(seq_delta.unsigned_abs())
                };
                StreamId::new(ms, seq)
            }
            IdGen::Small { ms, seq } => StreamId::new(u64::from(*ms), u64::from(*seq)),
            IdGen::Top(k) => [
                StreamId::MAX,
                StreamId::new(u64::MAX, u64::MAX - 1),
                StreamId::new(u64::MAX, 0),
                StreamId::new(u64::MAX - 1, u64::MAX),
            ][usize::from(*k) % 4],
        }
    }

    fn arg(&self, arg: &IdArg) -> String {
        let id = self.resolve(&arg.id);
        if arg.ms_only {
            id.ms.to_string()
        } else {
            id.to_string()
        }
    }

    fn tok(&self, tok: &IdTok) -> String {
        match tok {
            IdTok::Id(arg) => self.arg(arg),
            IdTok::Bad(i) => (*i.get(&BAD_IDS)).to_string(),
        }
    }

    fn bound(&self, b: &Bound) -> String {
        match b {
            Bound::Min => "-".into(),
            Bound::Max => "+".into(),
            Bound::Id { id, exclusive } => {
                format!("{}{}", if *exclusive { "(" } else { "" }, self.arg(id))
            }
        }
    }

    fn group_id(&self, id: &GroupId) -> String {
        match id {
            GroupId::Dollar => "$".into(),
            GroupId::Zero => "0".into(),
            GroupId::Tok(tok) => self.tok(tok),
        }
    }

    fn read_from(&self, from: &ReadFrom) -> String {
        match from {
            ReadFrom::New => ">".into(),
            ReadFrom::Zero => "0".into(),
            ReadFrom::History(tok) => self.tok(tok),
        }
    }
}

fn int_text(tok: &IntTok) -> String {
    match tok {
        IntTok::N(n) => n.to_string(),
        IntTok::Bad => "1.5".into(),
    }
}

/// Mostly the first group, so that commands meet existing groups; rarely the third, which
/// is then usually missing.
/// The strategy token of a trim, if any.
fn delete_token(t: &Trim) -> Vec<String> {
    match t.delete {
        1 => vec!["KEEPREF".into()],
        2 => vec!["DELREF".into()],
        3 => vec!["acked".into()],
        _ => Vec::new(),
    }
}

fn group_name(index: &Index) -> &'static str {
    GROUPS[match index.index(20) {
        0..=13 => 0,
        14..=18 => 1,
        _ => 2,
    }]
}

fn consumer_name(index: &Index) -> &'static str {
    CONSUMERS[match index.index(10) {
        0..=4 => 0,
        5..=8 => 1,
        _ => 2,
    }]
}

fn trim_args(t: &Trim, ids: &Ids<'_>) -> Vec<String> {
    let mut args = vec![if t.minid { "MINID" } else { "MAXLEN" }.to_string()];
    if t.approx {
        args.push("~".into());
    }
    args.push(if t.minid {
        ids.resolve(&t.min).to_string()
    } else {
        t.maxlen.to_string()
    });
    args
}

/// The arguments of `cmd` on key number `key`, given the model's state.
pub fn render(
    key: usize,
    cmd: &Cmd,
    mangle: &Mangle,
    model: &GroupModel,
    now_ms: u64,
) -> Vec<Vec<u8>> {
    let key_name = KEYS[key];
    let ids = Ids {
        model,
        key: key_name.as_bytes(),
    };
    let k = key_name.to_string();
    let s = |t: &str| t.to_string();
    let mut args: Vec<String> = match cmd {
        Cmd::Add { id, trim, fields } => {
            let mut args = vec![s("XADD"), k];
            if let Some(t) = trim {
                args.extend(delete_token(t));
                args.extend(trim_args(t, &ids));
            }
            args.push(match id {
                None => s("*"),
                Some(choice) => ids.resolve(choice).to_string(),
            });
            args.extend(fields.get(&FIELDS).iter().map(|f| f.to_string()));
            return args.into_iter().map(String::into_bytes).collect();
        }
        Cmd::Del(choices) => {
            let mut args = vec![s("XDEL"), k];
            args.extend(choices.iter().map(|c| ids.resolve(c).to_string()));
            return args.into_iter().map(String::into_bytes).collect();
        }
        Cmd::Trim(t) => {
            let args = [vec![s("XTRIM"), k], delete_token(t), trim_args(t, &ids)].concat();
            return args.into_iter().map(String::into_bytes).collect();
        }
        Cmd::SetId { id, entries_added } => {
            let stream = model.stream(key_name.as_bytes()).ok().flatten();
            let floor = stream.map_or(StreamId::MIN, |s| s.last_id);
            let mut args = vec![s("XSETID"), k, ids.resolve(id).max(floor).to_string()];
            if let Some(delta) = entries_added {
                let length = stream.map_or(0, |s| s.length as i64);
                args.push(s("ENTRIESADDED"));
                args.push((length + i64::from(*delta)).to_string());
            }
            return args.into_iter().map(String::into_bytes).collect();
        }
        Cmd::Create {
            group,
            id,
            mkstream,
            entries_read,
        } => {
            let mut args = vec![
                s("XGROUP"),
                s("CREATE"),
                k,
                s(group_name(group)),
                ids.group_id(id),
            ];
            if *mkstream {
                args.push(s("MKSTREAM"));
            }
            if let Some(n) = entries_read {
                args.push(s("ENTRIESREAD"));
                args.push(int_text(n));
            }
            args
        }
        Cmd::SetGroupId {
            group,
            id,
            entries_read,
        } => {
            let mut args = vec![
                s("XGROUP"),
                s("SETID"),
                k,
                s(group_name(group)),
                ids.group_id(id),
            ];
            if let Some(n) = entries_read {
                args.push(s("ENTRIESREAD"));
                args.push(int_text(n));
            }
            args
        }
        Cmd::Destroy { group } => vec![s("XGROUP"), s("DESTROY"), k, s(group_name(group))],
        Cmd::CreateConsumer { group, consumer } => vec![
            s("XGROUP"),
            s("CREATECONSUMER"),
            k,
            s(group_name(group)),
            s(consumer_name(consumer)),
        ],
        Cmd::DelConsumer { group, consumer } => vec![
            s("XGROUP"),
            s("DELCONSUMER"),
            k,
            s(group_name(group)),
            s(consumer_name(consumer)),
        ],
        Cmd::ReadGroup {
            group,
            consumer,
            count,
            block,
            noack,
            claim,
            first,
            second,
        } => {
            let mut args = vec![
                s("XREADGROUP"),
                s("GROUP"),
                s(group_name(group)),
                s(consumer_name(consumer)),
            ];
            if let Some(min) = claim {
                args.push(s("CLAIM"));
                args.push(int_text(min));
            }
            if let Some(n) = count {
                args.push(s("COUNT"));
                args.push(int_text(n));
            }
            if *block {
                args.push(s("BLOCK"));
                args.push(s("10"));
            }
            if *noack {
                args.push(s("NOACK"));
            }
            args.push(s("STREAMS"));
            args.push(k);
            let mut from = vec![ids.read_from(first)];
            if let Some((other, second)) = second {
                let other_key = KEYS[*other];
                let other_ids = Ids {
                    model,
                    key: other_key.as_bytes(),
                };
                args.push(s(other_key));
                from.push(other_ids.read_from(second));
            }
            args.extend(from);
            args
        }
        Cmd::Read { count, from } => {
            let mut args = vec![s("XREAD")];
            if let Some(n) = count {
                args.push(s("COUNT"));
                args.push(int_text(n));
            }
            args.extend([s("STREAMS"), k]);
            args.push(match from {
                PlainFrom::Dollar => s("$"),
                PlainFrom::Plus => s("+"),
                PlainFrom::Id(tok) => ids.tok(tok),
            });
            args
        }
        Cmd::Ack { group, ids: toks } => {
            let mut args = vec![s("XACK"), k, s(group_name(group))];
            args.extend(toks.iter().map(|t| ids.tok(t)));
            args
        }
        Cmd::DelEx {
            group,
            strategy,
            ids: gens,
            strategy_last,
        } => {
            let mut args = match group {
                Some(group) => vec![s("XACKDEL"), k, s(group_name(group))],
                None => vec![s("XDELEX"), k],
            };
            let token = ["KEEPREF", "DELREF", "ACKED"].get(usize::from(*strategy));
            if !strategy_last && let Some(t) = token {
                args.push(s(t));
            }
            args.push(s("IDS"));
            args.push(gens.len().to_string());
            args.extend(gens.iter().map(|g| ids.resolve(g).to_string()));
            if *strategy_last && let Some(t) = token {
                args.push(s(t));
            }
            args
        }
        Cmd::Nack {
            group,
            mode,
            ids: toks,
            retry_count,
            force,
            options_first,
        } => {
            let mode = ["SILENT", "FAIL", "FATAL", "MAYBE"][usize::from(*mode % 4)];
            let mut args = vec![s("XNACK"), k, s(group_name(group)), s(mode)];
            let mut options = Vec::new();
            if let Some(n) = retry_count {
                options.push(s("RETRYCOUNT"));
                options.push(int_text(n));
            }
            if *force {
                options.push(s("FORCE"));
            }
            if *options_first {
                args.append(&mut options);
            }
            args.push(s("IDS"));
            args.push(toks.len().to_string());
            args.extend(toks.iter().map(|t| ids.tok(t)));
            args.append(&mut options);
            args
        }
        Cmd::Pending { group, range } => {
            let mut args = vec![s("XPENDING"), k, s(group_name(group))];
            if let Some(r) = range {
                if let Some(idle) = &r.idle {
                    args.push(s("IDLE"));
                    args.push(int_text(idle));
                }
                args.push(ids.bound(&r.start));
                args.push(ids.bound(&r.end));
                args.push(int_text(&r.count));
                if let Some(c) = &r.consumer {
                    args.push(s(consumer_name(c)));
                }
            }
            args
        }
        Cmd::Claim {
            group,
            consumer,
            min_idle,
            ids: toks,
            options,
        } => {
            let mut args = vec![
                s("XCLAIM"),
                k,
                s(group_name(group)),
                s(consumer_name(consumer)),
                int_text(min_idle),
            ];
            args.extend(toks.iter().map(|t| ids.tok(t)));
            for option in options {
                match option {
                    ClaimOpt::Idle(n) => args.extend([s("IDLE"), int_text(n)]),
                    ClaimOpt::Time(delta) => {
                        let at = i64::try_from(now_ms).unwrap_or(i64::MAX);
                        args.extend([s("TIME"), (at + i64::from(*delta)).to_string()]);
                    }
                    ClaimOpt::RetryCount(n) => args.extend([s("RETRYCOUNT"), int_text(n)]),
                    ClaimOpt::Force => args.push(s("FORCE")),
                    ClaimOpt::JustId => args.push(s("JUSTID")),
                    ClaimOpt::LastId(tok) => args.extend([s("LASTID"), ids.tok(tok)]),
                }
            }
            args
        }
        Cmd::AutoClaim {
            group,
            consumer,
            min_idle,
            start,
            count,
            just_id,
        } => {
            let mut args = vec![
                s("XAUTOCLAIM"),
                k,
                s(group_name(group)),
                s(consumer_name(consumer)),
                int_text(min_idle),
                ids.bound(start),
            ];
            if let Some(n) = count {
                args.push(s("COUNT"));
                args.push(int_text(n));
            }
            if *just_id {
                args.push(s("JUSTID"));
            }
            args
        }
        Cmd::InfoGroups => vec![s("XINFO"), s("GROUPS"), k],
        Cmd::InfoConsumers { group } => {
            vec![s("XINFO"), s("CONSUMERS"), k, s(group_name(group))]
        }
        Cmd::InfoStream { full } => {
            let mut args = vec![s("XINFO"), s("STREAM"), k];
            if let Some(count) = full {
                args.push(s("FULL"));
                if let Some(n) = count {
                    args.push(s("COUNT"));
                    args.push(int_text(n));
                }
            }
            args
        }
    };
    match mangle {
        Mangle::None => {}
        Mangle::Append(tok) => args.push((*tok.get(&STRAY_TOKENS)).to_string()),
        Mangle::DropLast => {
            args.pop();
        }
        Mangle::Replace(at, tok) => {
            // Never the command name or the subcommand: those have their own tests.
            let first = if matches!(args[0].as_str(), "XGROUP" | "XINFO") {
                2
            } else {
                1
            };
            let at = first + at.index(args.len() - first);
            args[at] = (*tok.get(&STRAY_TOKENS)).to_string();
        }
    }
    args.into_iter().map(String::into_bytes).collect()
}
