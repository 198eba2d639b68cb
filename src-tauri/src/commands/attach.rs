//! "Attach a sale" on the Connections screen: the proposal of `adapter init` as a form, a
//! preview reading as it is edited, and the sale saved as a profile with its adapter file.
//! Each command calls one core step (`stockguard_core::adapter::attach`); what is wrong with a
//! field comes back in the form's check, in the field, not as an error.

use stockguard_core::adapter::attach::{
    self, AttachError, AttachProfile, AttachTarget, Attached, Previewed, Proposed, SaveTo,
};
use stockguard_core::adapter::init::form::ProposalForm;
use stockguard_core::adapter::AdapterError;
use stockguard_core::step::chain;

use crate::error::{DesktopError, MessageCode, Said};

#[tauri::command(rename_all = "snake_case")]
pub async fn attach_propose(target: AttachTarget) -> Result<Proposed, DesktopError> {
    attach::propose(&target).await.map_err(failed)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn attach_preview(target: AttachTarget, form: ProposalForm) -> Result<Previewed, DesktopError> {
    attach::preview(&target, &form).await.map_err(failed)
}

#[tauri::command(rename_all = "snake_case")]
pub async fn attach_save(
    target: AttachTarget,
    form: ProposalForm,
    profile: AttachProfile,
    reason: String,
) -> Result<Attached, DesktopError> {
    attach::save(&SaveTo::default_place()?, &target, &form, &profile, &reason).await.map_err(failed)
}

/// Each step's error by its kind: the profile's and the servers' as everywhere; the adapter's
/// state database as a connection; a form that is not yet a file as the input to check.
fn failed(e: AttachError) -> DesktopError {
    use MessageCode as C;
    let m = chain(&e);
    match e {
        AttachError::Profile(e) => e.into(),
        AttachError::Connect(e) => e.into(),
        AttachError::Refused(e) | AttachError::Adapter(AdapterError::NotAllowed(e)) => e.into(),
        AttachError::Adapter(AdapterError::StateConnect(e)) => e.into(),
        AttachError::NoEnvironment => DesktopError::Invalid(Said::new(C::ChooseEnvironment, &[], m)),
        AttachError::NoReason => DesktopError::Invalid(Said::new(C::ReasonRequired, &[], m)),
        AttachError::Adapter(AdapterError::NoStateDb) | AttachError::Form(_) => DesktopError::Invalid(m.into()),
        AttachError::Adapter(_) | AttachError::WriteFile { .. } => {
            DesktopError::Query(Said::new(C::QueryFailed, &[("detail", &m)], m.clone()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn a_missing_reason_or_environment_is_the_input_to_check_said_by_its_code() {
        let reason = failed(AttachError::NoReason).wire();
        assert_eq!((reason.kind, reason.code), (ErrorKind::Invalid, MessageCode::ReasonRequired));
        let environment = failed(AttachError::NoEnvironment).wire();
        assert_eq!((environment.kind, environment.code), (ErrorKind::Invalid, MessageCode::ChooseEnvironment));
    }

    #[test]
    fn a_role_that_may_not_record_baselines_is_a_refusal_naming_the_roles_that_may() {
        use stockguard_core::action::{Action, Refused};
        let viewer = Refused::Role { role: stockguard_core::profile::Role::Viewer, action: Action::RecordBaselines };
        let refused = failed(AttachError::Refused(viewer)).wire();
        assert_eq!((refused.kind, refused.code), (ErrorKind::Refused, MessageCode::RefusedRole));
        assert_eq!(refused.params["action"], "record_baselines");
    }
}
