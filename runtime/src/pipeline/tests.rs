//! Unit tests of pipeline descriptions: the checks against device features and limits.

use super::*;

fn info() -> DeviceInfo {
    DeviceInfo {
        index: 0,
        name: "test".into(),
        device_type: crate::DeviceType::Cpu,
        driver_name: String::new(),
        driver_info: String::new(),
        api_version: (1, 3, 0),
        uuid: [0; 16],
        subgroup_size: 8,
        min_subgroup_size: 4,
        max_subgroup_size: 16,
        max_push_constants_size: 128,
        max_workgroup_size: [1024, 1024, 64],
        max_workgroup_invocations: 1024,
        max_shared_memory: 32768,
        max_workgroup_count: [65535; 3],
        max_workgroup_subgroups: 32,
        max_allocation_size: 1 << 30,
        features: all(),
        compute_queues: 1,
    }
}

/// Header, then `OpEntryPoint GLCompute %1 "main"`.
const WORDS: [u32; 9] = [
    SPIRV_MAGIC,
    0x0001_0500,
    0,
    16,
    0,
    (4 << 16) | 15,
    5,
    1,
    u32::from_le_bytes(*b"main"),
];

fn desc() -> PipelineDesc<'static> {
    PipelineDesc {
        spirv: &WORDS,
        entry_point: "main",
        local_size: [64, 1, 1],
        shared_memory_size: 0,
        extra_shared_memory: 0,
        specialization: &[],
        push_constant_size: 16,
        required_subgroup_size: None,
        require_full_subgroups: false,
        virtual_lanes: None,
        required_features: FeatureSet::default(),
        name_for_errors: "k",
        cancel_word_at: None,
    }
}

fn all() -> FeatureSet {
    FeatureSet {
        subgroup_size_control: true,
        compute_full_subgroups: true,
        ..FeatureSet::default()
    }
}

#[test]
fn accepts_a_good_description() {
    check(&info(), &all(), &desc()).unwrap();
}

#[test]
fn rejects_bad_limits() {
    let bad = |d: PipelineDesc| {
        assert!(matches!(
            check(&info(), &all(), &d),
            Err(Error::InvalidArgument(_))
        ))
    };
    bad(PipelineDesc {
        local_size: [0, 1, 1],
        ..desc()
    });
    bad(PipelineDesc {
        local_size: [1, 1, 65],
        ..desc()
    });
    bad(PipelineDesc {
        local_size: [64, 32, 1],
        ..desc()
    });
    bad(PipelineDesc {
        push_constant_size: 6,
        ..desc()
    });
    bad(PipelineDesc {
        push_constant_size: 132,
        ..desc()
    });
    bad(PipelineDesc {
        spirv: &[1, 2, 3, 4, 5],
        ..desc()
    });
    bad(PipelineDesc {
        entry_point: "",
        ..desc()
    });
    bad(PipelineDesc {
        local_size: [12, 1, 1],
        require_full_subgroups: true,
        ..desc()
    });
    bad(PipelineDesc {
        local_size: [1024, 1, 1],
        required_subgroup_size: Some(4),
        ..desc()
    });
}

#[test]
fn shared_memory_beyond_the_device_limit_is_named() {
    check(
        &info(),
        &all(),
        &PipelineDesc {
            shared_memory_size: 32768,
            ..desc()
        },
    )
    .unwrap();
    for (arena, extra) in [(32772, 0), (32768, 8)] {
        let err = check(
            &info(),
            &all(),
            &PipelineDesc {
                shared_memory_size: arena,
                extra_shared_memory: extra,
                ..desc()
            },
        )
        .unwrap_err();
        let size = arena as u64 + extra as u64;
        assert!(
            matches!(err, Error::SharedMemory { ref what, size: s, limit: 32768 } if what == "k" && s == size),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!(
                "k needs {size} bytes of shared memory per work-group, more than the device's \
                 maxComputeSharedMemorySize of 32768 bytes"
            )
        );
    }
}

#[test]
fn a_float_control_the_device_lacks_is_named() {
    let mut device = info();
    device
        .features
        .float_controls
        .signed_zero_inf_nan_preserve_32 = true;
    let need = |f64_too: bool| PipelineDesc {
        required_features: FeatureSet {
            float_controls: crate::FloatControls {
                signed_zero_inf_nan_preserve_32: true,
                signed_zero_inf_nan_preserve_64: f64_too,
                ..Default::default()
            },
            ..FeatureSet::default()
        },
        ..desc()
    };
    let enabled = device.features;
    check(&device, &enabled, &need(false)).unwrap();
    match check(&device, &enabled, &need(true)) {
        Err(Error::MissingFeatures { features, .. }) => {
            assert_eq!(features, vec!["shaderSignedZeroInfNanPreserveFloat64"])
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn subgroup_size_must_be_supported() {
    let err = |n| match check(
        &info(),
        &all(),
        &PipelineDesc {
            required_subgroup_size: Some(n),
            ..desc()
        },
    ) {
        Err(Error::MissingFeatures { features, .. }) => features,
        other => panic!("{other:?}"),
    };
    assert_eq!(err(32), vec!["requiredSubgroupSize 32"]);
    assert_eq!(err(12), vec!["requiredSubgroupSize 12"]);
    assert_eq!(err(2), vec!["requiredSubgroupSize 2"]);
    check(
        &info(),
        &all(),
        &PipelineDesc {
            required_subgroup_size: Some(16),
            require_full_subgroups: true,
            ..desc()
        },
    )
    .unwrap();
    let sized = PipelineDesc {
        required_subgroup_size: Some(8),
        require_full_subgroups: true,
        ..desc()
    };
    // The device has both features, the context did not enable them.
    match check(&info(), &FeatureSet::default(), &sized) {
        Err(Error::FeaturesNotEnabled { features, what }) => {
            assert_eq!(what, "k");
            assert_eq!(
                features,
                vec!["subgroupSizeControl", "computeFullSubgroups"]
            );
        }
        other => panic!("{other:?}"),
    }
    // The device lacks one of them: that is the error, with the one left out after it.
    let mut lacking = info();
    lacking.features.compute_full_subgroups = false;
    match check(&lacking, &FeatureSet::default(), &sized) {
        Err(Error::MissingFeatures { features, .. }) => {
            assert_eq!(
                features,
                vec!["computeFullSubgroups", "subgroupSizeControl"]
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn virtual_lanes_run_whole_hardware_sub_groups_with_or_without_a_required_size() {
    let shape = |local: u32, required: Option<u32>| PipelineDesc {
        local_size: [local, 1, 1],
        virtual_lanes: Some(LaneShape {
            lanes: 4,
            subgroup_size: 8,
        }),
        required_subgroup_size: required,
        require_full_subgroups: required.is_some(),
        ..desc()
    };
    // ceil(n / 32) hardware sub-groups of 8 invocations.
    for (local, x) in [(1, 8), (5, 8), (32, 8), (33, 16), (100, 32)] {
        assert_eq!(shape(local, Some(8)).hardware_local_size(), [x, 1, 1]);
        assert_eq!(shape(local, None).hardware_local_size(), [x, 1, 1]);
    }
    // A device without sub-group size control runs the pipeline without a required size.
    let mut lacking = info();
    lacking.features = FeatureSet::default();
    check(&lacking, &FeatureSet::default(), &shape(100, None)).unwrap();
    match check(&lacking, &FeatureSet::default(), &shape(100, Some(8))) {
        Err(Error::MissingFeatures { features, .. }) => {
            assert_eq!(
                features,
                vec!["subgroupSizeControl", "computeFullSubgroups"]
            )
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_module_needs_the_sub_group_operations_its_capabilities_declare() {
    // WORDS with `OpCapability GroupNonUniform` and `GroupNonUniformClustered` before the
    // entry point: a device without clustered operations in compute is named as lacking them.
    let mut words = WORDS[..5].to_vec();
    words.extend([(2 << 16) | 17, 61, (2 << 16) | 17, 67]);
    words.extend(&WORDS[5..]);
    let d = PipelineDesc {
        spirv: &words,
        ..desc()
    };
    let mut dev = info();
    dev.features.subgroup_ops.basic = true;
    let mut enabled = all();
    enabled.subgroup_ops = dev.features.subgroup_ops;
    match check(&dev, &enabled, &d) {
        Err(Error::MissingFeatures { features, .. }) => {
            assert_eq!(features, vec!["VK_SUBGROUP_FEATURE_CLUSTERED_BIT"])
        }
        other => panic!("{other:?}"),
    }
    // With them on the device and in the context, it passes.
    dev.features.subgroup_ops.clustered = true;
    enabled.subgroup_ops = dev.features.subgroup_ops;
    check(&dev, &enabled, &d).unwrap();
}
