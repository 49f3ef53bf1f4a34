package ranges

// supersetGraph uses the tlcheck.ir.v1 tags of spec's other primitives
// and the tags moved into the registry (batch_norm_eval,
// hard_masked_softmax, bernoulli_mask), on an input of shape [2,3].
const supersetGraph = `{"format":"tlcheck.ir.v1","input_id":0,"output_id":20,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[2,3]},
  {"id":1,"kind":"const","parents":[],"shape":[2,3],"value_shape":[2,3]},
  {"id":2,"kind":"div","parents":[0,1],"shape":[2,3]},
  {"id":3,"kind":"scale","parents":[0],"shape":[2,3],"c":"-3/2"},
  {"id":4,"kind":"neg","parents":[0],"shape":[2,3]},
  {"id":5,"kind":"square","parents":[0],"shape":[2,3]},
  {"id":6,"kind":"clamp","parents":[0],"shape":[2,3],"lo":"-1","hi":"1/2"},
  {"id":7,"kind":"gelu","parents":[0],"shape":[2,3]},
  {"id":8,"kind":"log_softmax","parents":[0],"shape":[2,3],"axis":1},
  {"id":9,"kind":"slice","parents":[0],"shape":[2,2],"axis":1,"start":1,"end":3},
  {"id":10,"kind":"sign","parents":[0],"shape":[2,3]},
  {"id":11,"kind":"shrink","parents":[0],"shape":[2,3],"lambd":"1/2","bias":"1/4"},
  {"id":12,"kind":"pad","parents":[0],"shape":[4,5],"widths":[1,2,1,0],"mode":"reflect","value":"0"},
  {"id":13,"kind":"gather","parents":[0],"shape":[2,3],"axis":1,"indices_shape":[3],"indices":[2,2,0]},
  {"id":14,"kind":"batch_norm_eval","parents":[0],"shape":[2,3],"channel_axis":1,"channels":3},
  {"id":15,"kind":"reshape","parents":[0],"shape":[1,2,3],"in_shape":[2,3],"out_shape":[1,2,3]},
  {"id":16,"kind":"instance_norm","parents":[15],"shape":[1,2,3],"channels":2},
  {"id":17,"kind":"lrn","parents":[0],"shape":[2,3],"size":3,"alpha":"1/2","beta":"3/4","bias":"1"},
  {"id":18,"kind":"hard_masked_softmax","parents":[0],"shape":[2,3],"mask":{"shape":[2,3],"allowed":[true,false,true,false,false,false]}},
  {"id":19,"kind":"const","parents":[],"shape":[],"value_shape":[]},
  {"id":20,"kind":"bernoulli_mask","parents":[19],"shape":[2,3],"seed":5},
  {"id":21,"kind":"erf","parents":[0],"shape":[2,3]},
  {"id":22,"kind":"asinh","parents":[0],"shape":[2,3]},
  {"id":23,"kind":"exp","parents":[0],"shape":[2,3]},
  {"id":24,"kind":"pow","parents":[23,1],"shape":[2,3]},
  {"id":25,"kind":"reduce_prod","parents":[0],"shape":[2],"axis":1},
  {"id":26,"kind":"bce_with_logits","parents":[0,1],"shape":[]},
  {"id":27,"kind":"tile","parents":[0],"shape":[4,6],"out_shape":[4,6]},
  {"id":28,"kind":"scatter","parents":[0,9],"shape":[2,3],"axis":0,"indices_shape":[2,2],"indices":[1,0,0,1]},
  {"id":29,"kind":"renorm","parents":[0],"shape":[2,3],"axis":1,"maxnorm":"1"},
  {"id":30,"kind":"l2_normalize","parents":[0],"shape":[2,3],"axis":1,"eps":"1/2"},
  {"id":31,"kind":"round_f16","parents":[2],"shape":[2,3]},
  {"id":32,"kind":"round_bf16","parents":[7],"shape":[2,3]},
  {"id":33,"kind":"round_f32","parents":[0],"shape":[2,3]},
  {"id":34,"kind":"trunc_int","parents":[3],"shape":[2,3],"lo":"-128","hi":"127"},
  {"id":35,"kind":"erf_deriv","parents":[0],"shape":[2,3]},
  {"id":36,"kind":"round_int","parents":[3],"shape":[2,3]},
  {"id":37,"kind":"quant_int","parents":[3],"shape":[2,3],"c":"1/8","bias":"3","lo":"-128","hi":"127"}
]}`

const supersetPayload = `{"format":"tlcheck.payload.v1","entries":{
  "1":{"value":{"shape":[2,3],"values":["2","1/2","3","-1","5/4","-7"]}},
  "14":{"gamma":{"shape":[3],"values":["1","-2","1/2"]},"beta":{"shape":[3],"values":["0","1/3","-1"]},"mean":{"shape":[3],"values":["1/2","0","-1"]},"var":{"shape":[3],"values":["2","1/4","0"]},"eps":"1/1000"},
  "16":{"gamma":{"shape":[2],"values":["1","3/2"]},"beta":{"shape":[2],"values":["0","-1"]},"eps":"1/100"},
  "19":{"value":{"shape":[],"values":["1/2"]}}
}}`
