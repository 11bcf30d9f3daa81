"""Learning-theory claims: accuracy and probability bounds (:mod:`.probability`), private
prediction and stability (:mod:`.prediction`) and sample complexity (:mod:`.sample_complexity`)."""
