//! The serialized form of a parameter set (feature `serde`): a named set by its id, a custom set by its fields,
//! deserialized through the same validation as [`GlweParameters::new`].
//!
//! [`GlweParameters`]'s `Serialize` and `Deserialize` are written here, by hand, as the derive's
//! `#[serde(into = "GlweParametersRepr", try_from = "GlweParametersRepr")]` would write them (the same
//! serialized form, the conversion's error as the deserializer's custom error): the type's own file does not
//! name this one.

use super::glwe_parameters::{GlweParameters, KeyDistribution, ParameterSetId};
use super::noise_distribution::NoiseDistribution;
use crate::dimensions::{GlweDimension, PolynomialSize};
use crate::error::{Error, Result};

/// The serialized form of a [`GlweParameters`]: a named set by id, a custom set by its fields.
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) enum GlweParametersRepr {
    /// A named set's id ([`GlweParameters::from_id`]).
    Named(u16),
    /// A custom set, rebuilt with [`GlweParameters::new`], or [`GlweParameters::new_allow_insecure`] if
    /// `allow_insecure` is set.
    Custom {
        torus_bits: u32,
        polynomial_size: PolynomialSize,
        glwe_dimension: GlweDimension,
        noise: NoiseDistribution,
        key_distribution: KeyDistribution,
        allow_insecure: bool,
    },
}

impl From<GlweParameters> for GlweParametersRepr {
    fn from(p: GlweParameters) -> Self {
        if p.id == ParameterSetId::CUSTOM {
            Self::Custom {
                torus_bits: p.torus_bits,
                polynomial_size: p.polynomial_size,
                glwe_dimension: p.glwe_dimension,
                noise: p.noise,
                key_distribution: p.key_distribution,
                allow_insecure: p.insecure,
            }
        } else {
            Self::Named(p.id.0)
        }
    }
}

impl TryFrom<GlweParametersRepr> for GlweParameters {
    type Error = Error;

    fn try_from(repr: GlweParametersRepr) -> Result<Self> {
        match repr {
            GlweParametersRepr::Named(id) => Self::from_id(ParameterSetId(id)).ok_or(Error::UnknownParameterSet(id)),
            GlweParametersRepr::Custom {
                torus_bits,
                polynomial_size,
                glwe_dimension,
                noise,
                key_distribution: KeyDistribution::Binary,
                allow_insecure,
            } => {
                if allow_insecure {
                    Self::new_allow_insecure(torus_bits, polynomial_size, glwe_dimension, noise)
                } else {
                    Self::new(torus_bits, polynomial_size, glwe_dimension, noise)
                }
            }
        }
    }
}

impl serde::Serialize for GlweParameters {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> core::result::Result<S::Ok, S::Error> {
        serde::Serialize::serialize(&GlweParametersRepr::from(*self), serializer)
    }
}

impl<'de> serde::Deserialize<'de> for GlweParameters {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> core::result::Result<Self, D::Error> {
        let repr = <GlweParametersRepr as serde::Deserialize>::deserialize(deserializer)?;
        Self::try_from(repr).map_err(serde::de::Error::custom)
    }
}
