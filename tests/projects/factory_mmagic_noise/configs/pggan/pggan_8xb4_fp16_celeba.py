model = dict(type='PGGAN', generator=dict(type='PGGANGenerator', noise_size=512))
optim_wrapper = dict(
    generator=dict(type='AmpOptimWrapper', loss_scale=512, optimizer=dict(type='Adam', lr=0.001)),
    discriminator=dict(type='AmpOptimWrapper', loss_scale=512, optimizer=dict(type='Adam', lr=0.001)))
