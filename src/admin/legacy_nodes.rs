//! Nodes as an old (pre-upgrade) Ironic service writes them: create, list,
//! change and delete, writing the legacy columns (`maintenance`,
//! `maintenance_reason`) directly, without touching `node_maintenance`.
//! That is how `nodemaint node …` builds a fleet by hand, and how tests act
//! as a not-yet-upgraded service. Not for an API service: it would break the
//! invariant the operations keep.

use crate::authority::entry::check_reason;
use crate::error::{Error, Result};
use crate::store::legacy;
use crate::store::nodes::find;
use nodemaint_entity::nodes;
use nodemaint_runtime::sql::now_utc;
use sea_orm::{ActiveValue::Set, ConnectionTrait};

#[derive(Debug, Clone, Default)]
pub struct NewNode {
    pub uuid: Option<String>,
    pub name: Option<String>,
    pub owner: Option<String>,
    pub lessee: Option<String>,
    pub maintenance: bool,
    pub maintenance_reason: Option<String>,
}

/// A value for one of Ironic's `VARCHAR(255)` node columns, checked before
/// it reaches the database (which would refuse it with a driver error, or on
/// SQLite keep it).
fn check_field(flag: &str, value: Option<&str>) -> Result<()> {
    if let Some(value) = value {
        let chars = value.chars().count();
        if chars > nodes::FIELD_MAX {
            return Err(Error::BadRequest(format!(
                "{flag} is {chars} characters long; Ironic's column holds at most {}",
                nodes::FIELD_MAX
            )));
        }
    }
    Ok(())
}

/// Refuses a name that is a uuid or belongs to another node.
async fn check_name<C: ConnectionTrait>(db: &C, name: &str, except_id: Option<i32>) -> Result<()> {
    check_field("--name", Some(name))?;
    if uuid::Uuid::try_parse(name).is_ok() {
        return Err(Error::BadRequest(format!("node name `{name}` looks like a uuid; pick another name")));
    }
    let taken = legacy::named(db, name).await?;
    if taken.is_some_and(|n| Some(n.id) != except_id) {
        return Err(Error::Conflict(format!("a node named `{name}` already exists")));
    }
    Ok(())
}

pub async fn create<C: ConnectionTrait>(db: &C, new: NewNode) -> Result<nodes::Model> {
    let uuid = match new.uuid {
        Some(u) => uuid::Uuid::try_parse(&u)
            .map_err(|_| Error::BadRequest(format!("`{u}` is not a uuid; leave --uuid out to generate one")))?
            .to_string(),
        None => uuid::Uuid::new_v4().to_string(),
    };
    check_field("--owner", new.owner.as_deref())?;
    check_field("--lessee", new.lessee.as_deref())?;
    check_reason(new.maintenance_reason.as_deref())?;
    if let Some(name) = &new.name {
        check_name(db, name, None).await?;
    }
    let model = nodes::ActiveModel {
        uuid: Set(Some(uuid)),
        name: Set(new.name),
        owner: Set(new.owner),
        lessee: Set(new.lessee),
        maintenance: Set(Some(new.maintenance)),
        maintenance_reason: Set(if new.maintenance { new.maintenance_reason } else { None }),
        created_at: Set(Some(now_utc())),
        ..Default::default()
    };
    Ok(legacy::insert(db, model).await?)
}

/// At most `limit` nodes in id order, optionally only those in maintenance.
pub async fn list<C: ConnectionTrait>(db: &C, limit: u64, only_maintained: bool) -> Result<Vec<nodes::Model>> {
    Ok(legacy::list(db, limit, only_maintained).await?)
}

/// A change to a node's columns, written as an old service would.
#[derive(Debug, Clone, Default)]
pub struct NodeChange {
    pub name: Option<String>,
    pub owner: Option<Option<String>>,
    pub lessee: Option<Option<String>>,
    /// `Some(true)`: set maintenance (with `reason`); `Some(false)`: clear it and its reason.
    pub maintenance: Option<bool>,
    pub reason: Option<String>,
}

pub async fn set<C: ConnectionTrait>(db: &C, ident: &str, change: NodeChange) -> Result<nodes::Model> {
    let node = find(db, ident).await?;
    check_field("--owner", change.owner.as_ref().and_then(Option::as_deref))?;
    check_field("--lessee", change.lessee.as_ref().and_then(Option::as_deref))?;
    check_reason(change.reason.as_deref())?;
    if let Some(name) = &change.name {
        check_name(db, name, Some(node.id)).await?;
    }
    let mut active: nodes::ActiveModel = node.clone().into();
    if let Some(name) = change.name {
        active.name = Set(Some(name));
    }
    if let Some(owner) = change.owner {
        active.owner = Set(owner);
    }
    if let Some(lessee) = change.lessee {
        active.lessee = Set(lessee);
    }
    match change.maintenance {
        Some(true) => {
            active.maintenance = Set(Some(true));
            active.maintenance_reason = Set(change.reason);
        }
        Some(false) => {
            active.maintenance = Set(Some(false));
            active.maintenance_reason = Set(None);
        }
        None => {
            if let Some(reason) = change.reason {
                active.maintenance_reason = Set(Some(reason));
            }
        }
    }
    active.updated_at = Set(Some(now_utc()));
    Ok(legacy::update(db, active).await?)
}

/// Deletes a node as Ironic's `destroy_node` does: its history, then the
/// node (its maintenance entries go with it), in one transaction.
pub async fn delete(db: &sea_orm::DatabaseConnection, ident: &str) -> Result<nodes::Model> {
    legacy::delete(db, ident).await
}
