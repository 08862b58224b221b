//! tfhe-rs 1.8.2's boolean parameter sets whose GLWE side is one of our named sets ([`BooleanSet`]): the
//! set itself, which errors name too; the keys and checks for a set are in [`super::boolean_set`].

use tfhe::boolean::parameters::{
    BooleanParameters, DEFAULT_PARAMETERS_KS_PBS, EncryptionKeyChoice, PARAMETERS_ERROR_PROB_2_POW_MINUS_165_KS_PBS,
    TFHE_LIB_PARAMETERS,
};
use tfhe_sbc_core::parameters::{
    DEFAULT_KS_PBS_GLWE_512_K3, ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2, GlweParameters, ParameterSetId,
    TFHE_LIB_GLWE_1024,
};

/// A tfhe-rs 1.8.2 boolean parameter set whose GLWE side is one of our named sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BooleanSet {
    /// `TFHE_LIB_PARAMETERS` ([`TFHE_LIB_GLWE_1024`]): about 120 bits, small encryption key, so extracted
    /// ciphertexts need a key switch (`super::BooleanBridge`).
    TfheLib,
    /// `DEFAULT_PARAMETERS_KS_PBS` ([`DEFAULT_KS_PBS_GLWE_512_K3`]): 128 bits, p-fail `2^-64`, big key.
    DefaultKsPbs,
    /// `PARAMETERS_ERROR_PROB_2_POW_MINUS_165_KS_PBS` ([`ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2`]): 128 bits,
    /// p-fail `2^-165`, big key.
    ErrorProb2m165KsPbs,
}

impl BooleanSet {
    /// Every set, in parameter-set id order.
    pub const ALL: [Self; 3] = [Self::TfheLib, Self::DefaultKsPbs, Self::ErrorProb2m165KsPbs];
    /// The two big-key sets.
    pub const BIG_KEY: [Self; 2] = [Self::DefaultKsPbs, Self::ErrorProb2m165KsPbs];

    /// The set whose GLWE side has this id, if any.
    pub const fn from_id(id: ParameterSetId) -> Option<Self> {
        match id {
            ParameterSetId::TFHE_LIB_GLWE_1024 => Some(Self::TfheLib),
            ParameterSetId::DEFAULT_KS_PBS_GLWE_512_K3 => Some(Self::DefaultKsPbs),
            ParameterSetId::ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2 => Some(Self::ErrorProb2m165KsPbs),
            _ => None,
        }
    }

    /// The set whose tfhe-rs parameters are exactly `parameters`, if any.
    pub fn from_tfhe_parameters(parameters: &BooleanParameters) -> Option<Self> {
        Self::ALL.into_iter().find(|set| set.tfhe_parameters() == *parameters)
    }

    /// Our named GLWE parameter set: what the device encrypts with.
    pub const fn glwe_parameters(self) -> GlweParameters {
        match self {
            Self::TfheLib => TFHE_LIB_GLWE_1024,
            Self::DefaultKsPbs => DEFAULT_KS_PBS_GLWE_512_K3,
            Self::ErrorProb2m165KsPbs => ERROR_PROB_2M165_KS_PBS_GLWE_1024_K2,
        }
    }

    /// The tfhe-rs parameters, as tfhe-rs 1.8.2 defines them.
    pub const fn tfhe_parameters(self) -> BooleanParameters {
        match self {
            Self::TfheLib => TFHE_LIB_PARAMETERS,
            Self::DefaultKsPbs => DEFAULT_PARAMETERS_KS_PBS,
            Self::ErrorProb2m165KsPbs => PARAMETERS_ERROR_PROB_2_POW_MINUS_165_KS_PBS,
        }
    }

    /// The tfhe-rs constant's name.
    pub const fn tfhe_name(self) -> &'static str {
        match self {
            Self::TfheLib => "TFHE_LIB_PARAMETERS",
            Self::DefaultKsPbs => "DEFAULT_PARAMETERS_KS_PBS",
            Self::ErrorProb2m165KsPbs => "PARAMETERS_ERROR_PROB_2_POW_MINUS_165_KS_PBS",
        }
    }

    /// Which key a gate's inputs are under, as we rely on it: `Big` (the GLWE key read flat, so an
    /// extracted ciphertext is a gate input) or `Small` (the LWE key of dimension `n`, so it needs a key
    /// switch first). `tests/parameter_sets/` checks it against tfhe-rs's constants.
    pub const fn encryption_key_choice(self) -> EncryptionKeyChoice {
        match self {
            Self::TfheLib => EncryptionKeyChoice::Small,
            Self::DefaultKsPbs | Self::ErrorProb2m165KsPbs => EncryptionKeyChoice::Big,
        }
    }

    /// Whether gates take extracted ciphertexts as they are.
    pub const fn is_big_key(self) -> bool {
        match self.encryption_key_choice() {
            EncryptionKeyChoice::Big => true,
            EncryptionKeyChoice::Small => false,
        }
    }

    /// `k`.
    pub const fn glwe_dimension(self) -> usize {
        self.glwe_parameters().glwe_dimension().0
    }

    /// `N`.
    pub const fn polynomial_size(self) -> usize {
        self.glwe_parameters().polynomial_size().0
    }

    /// The LWE dimension of an extracted ciphertext (the big key): `k * N`.
    pub const fn big_lwe_dimension(self) -> usize {
        self.glwe_dimension() * self.polynomial_size()
    }

    /// The number of `u32` words of the server key's key-switching key: `k*N * ks_level * (n + 1)`.
    pub fn key_switching_key_words(self) -> usize {
        let p = self.tfhe_parameters();
        self.big_lwe_dimension() * p.ks_level.0 * (p.lwe_dimension.0 + 1)
    }

    /// The number of complex (`c64`) elements of the server key's Fourier bootstrapping key:
    /// `n * pbs_level * (k + 1)^2 * N / 2`.
    pub fn bootstrapping_key_elements(self) -> usize {
        let p = self.tfhe_parameters();
        let k1 = self.glwe_dimension() + 1;
        p.lwe_dimension.0 * p.pbs_level.0 * k1 * k1 * self.polynomial_size() / 2
    }
}

impl core::fmt::Display for BooleanSet {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.tfhe_name())
    }
}
